export { Session, type NetworkState, type SessionOptions } from "./session.js";

export type { ExtensionState, ReloadResult, SessionView } from "./view.js";
export type { CatalogWalk, SelectionChange } from "./viewKeeper.js";
export type { PreparedCommand } from "./commands.js";
export { MCP_CATALOG_WAIT_MS, MCP_RELOADED_NOTIFICATION, RELOAD_ROUTE_TIMEOUT_MS, SESSION_METHODS } from "./rpcApi.js";
export type { McpCallObserver, McpCallRecord } from "./mcpMethods.js";
export { oneOffMcpPlaces } from "./mcp.js";
export type { ActivationObserver } from "./skillAccess.js";
