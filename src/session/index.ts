export { Session, type SessionOptions } from "./session.js";
export type { SessionPort } from "./port.js";
export type { RelayTarget } from "./kernelSlot.js";
export type { NetworkState } from "./network.js";

export type { ExtensionState, ReloadResult, SessionView } from "./view.js";
export type { PreparedCommand } from "./port.js";
export { MCP_CATALOG_WAIT_MS, MCP_PROGRESS_NOTIFICATION, MCP_RELOADED_NOTIFICATION, RELOAD_ROUTE_TIMEOUT_MS, SESSION_METHODS } from "./rpcApi.js";
export type { McpCallObserver, McpCallRecord } from "./mcpMethods.js";
export { oneOffMcpPlaces } from "./mcp.js";
export { NO_OUTPUT, runCell, type CellRun } from "./cells.js";
export { CELL_INTERRUPT_GRACE_MS } from "./limits.js";
export {
  CHECKPOINT_MANIFEST_FILE, CHECKPOINT_REPORT_FILE, CHECKPOINT_VALUES_DIR, MAX_CHECKPOINT_BYTES,
  MAX_CHECKPOINT_MANIFEST_BYTES, MAX_CHECKPOINT_NAME_BYTES, MAX_CHECKPOINT_NAMES, MAX_CHECKPOINT_REASON_CHARS,
} from "./limits.js";
export { listResumable, type ResumableSession } from "./checkpoints.js";
