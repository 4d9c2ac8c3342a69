export { Session, SESSION_ID_BYTES, type SessionOptions } from "./session.js";
export { KERNEL_EXTENSION, SESSION_KERNEL_ARGV } from "./kernelArgv.js";
export type { ExtensionState, ReloadResult, SessionView } from "./view.js";
export type { CatalogWalk, SelectionChange } from "./viewKeeper.js";
export type { PreparedCommand } from "./commands.js";
export { RELOAD_ROUTE_TIMEOUT_MS } from "./routes.js";
export type { ActivationObserver } from "./skillAccess.js";
