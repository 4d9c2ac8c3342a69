/** The daemon domain's public surface: the server, its client, and the files that name a running daemon. */
export { Daemon, type DaemonOptions, type ListenTarget, type RequestEntry, type StartReport } from "./server.js";
export { DaemonClient, DaemonError, findRunningDaemon, MAX_RESPONSE_BYTES, type CallOptions, type DaemonResponse } from "./client.js";
export { API, type RouteName } from "./api.js";
export type {
  CatalogResource, CreatedSession, ExecuteAnswer, HealthResource, KernelResource, OperationResource, OutputResource, ProblemDocument, ReceiptResource,
  ReloadAnswer, SessionResource, SettingsDocument, SettingsFileResource, StreamMessage, TurnResource,
} from "./resources.js";
export {
  DAEMON_DB_FILE, DAEMON_INFO_FILE, DAEMON_LOCK_FILE, DAEMON_TOKEN_FILE, DaemonLockedError, readDaemonInfo, readToken, removeDaemonInfo, type DaemonInfo,
} from "./state.js";
export { DaemonLog, type DaemonLogOptions, type LogStats } from "./log.js";
export { PROBLEMS, PROBLEM_CONTENT_TYPE, type ProblemCode } from "./problem.js";
export { openApiDocument, OPENAPI_COMMAND, OPENAPI_FILE } from "./openapi.js";
export * from "./limits.js";
export { DEFAULT_KERNEL_POOL, WarmPool, type SpareStatus, type WarmPoolOptions } from "./pool.js";
export { RemoteSession, type RemoteCommandOutcome } from "./remoteSession.js";
