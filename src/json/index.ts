/** JSON helpers shared by the catalog revision and the operation receipts. */
export { canonicalJson } from "./canonical.js";
