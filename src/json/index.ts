/** JSON helpers shared by the catalog revision, the operation receipts and the bounds on kernel outputs. */
export { canonicalJson } from "./canonical.js";
export { boundJson, jsonBytes, MAX_BOUNDED_DEPTH, MIN_BOUND_BYTES, type BoundedJson, type DropMarker } from "./bounded.js";
export { humanSize } from "./size.js";
