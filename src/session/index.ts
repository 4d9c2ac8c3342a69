export { Session, SESSION_ID_BYTES, KERNEL_EXTENSION, type ReloadResult, type SessionOptions } from "./session.js";
export { buildView, readSelection, type ExtensionState, type SelectionInputs, type SessionView } from "./view.js";
export type { CommandHost, PreparedCommand } from "./commands.js";
export { buildRoutes, RELOAD_ROUTE_TIMEOUT_MS } from "./routes.js";
