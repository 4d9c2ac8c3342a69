/** JSON helpers shared by the catalog revision, the operation receipts, request bodies, settings files and the bounds on kernel outputs. */
export { canonicalJson } from "./canonical.js";
export { jsonNestingDepth, jsonTextNestingDepth } from "./depth.js";
export { boundJson, jsonBytes, MAX_BOUNDED_DEPTH, MIN_BOUND_BYTES, type DropMarker } from "./bounded.js";
export { humanSize } from "./size.js";

export { problemsOfIssues, type JsonProblem } from "./issues.js";
export type { DeepReadonly, JsonValue } from "./value.js";
export { completeUtf8Length, decodeUtf8, decodeUtf8Strict, firstInvalidUtf8, utf8SequenceAt } from "./utf8.js";
export { deepFreeze } from "./freeze.js";
export { isWellFormedJson, parseJsonWellFormed, wellFormedJson } from "./wellFormed.js";
