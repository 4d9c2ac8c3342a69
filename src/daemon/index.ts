/** The daemon domain's public surface: the server, its client, and the files that name a running daemon. */
export { Daemon, type DaemonOptions, type ListenTarget, type RequestEntry, type StartReport } from "./server.js";
export { DaemonClient, DaemonError, findRunningDaemon, MAX_RESPONSE_BYTES, type DaemonResponse } from "./client.js";
export {
  DAEMON_DB_FILE, DAEMON_INFO_FILE, DAEMON_LOCK_FILE, DAEMON_TOKEN_FILE, DaemonLockedError, readDaemonInfo, readToken, removeDaemonInfo, type DaemonInfo,
} from "./state.js";
export { DaemonLog, type DaemonLogOptions, type LogStats } from "./log.js";
export { PROBLEMS, PROBLEM_CONTENT_TYPE, type ProblemCode } from "./problem.js";
export type { StreamEvent } from "./live.js";
export type { CatalogRow, InstructionRow, ManagementCatalog } from "./catalog.js";
export * from "./limits.js";
export { DEFAULT_KERNEL_POOL, WarmPool, type SpareStatus, type WarmPoolOptions } from "./pool.js";
export { RemoteSession, type RemoteCommandOutcome, type RemoteOutput, type RemoteSessionResource } from "./remoteSession.js";
