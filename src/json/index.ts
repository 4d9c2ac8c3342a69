/** JSON helpers shared by the catalog revision, the operation receipts, request bodies and settings files. */
export { canonicalJson } from "./canonical.js";
export { jsonNestingDepth } from "./depth.js";
