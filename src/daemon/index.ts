/** The daemon domain's public surface: the server, its client, and the files that name a running daemon. */
export { Daemon, type ListenTarget, type RequestEntry } from "./server.js";
export { DaemonClient, DaemonError, findRunningDaemon } from "./client.js";
export { API } from "./api.js";
export type { ReceiptResource, SessionClient, SessionResource, SettingsDocument, SettingsFileResource, StreamMessage, TurnResource } from "./resources.js";
export { DAEMON_INFO_FILE, DAEMON_TOKEN_FILE, DaemonLockedError, MAX_DAEMON_FILE_BYTES, readDaemonInfo, type DaemonInfo } from "./state.js";
export { DaemonLog } from "./log.js";
export { PROBLEMS, type ProblemCode } from "./problem.js";
export { openApiDocument, OPENAPI_COMMAND, OPENAPI_FILE } from "./openapi.js";
export {
  MAX_SESSIONS,
  HEALTH_TIMEOUT_MS,
  MAX_EXECUTE_OUTPUT_BYTES,
  SHUTDOWN_TIMEOUT_MS,
  MAX_STREAM_MESSAGE_BYTES,
  MAX_LOG_FILE_BYTES,
  LOG_ROTATIONS_KEPT,
  MAX_LOG_ENTRY_BYTES,
  LOG_REPEAT_WINDOW_MS,
  MAX_LOG_REPEATS,
  MAX_LOG_REPEAT_KEYS,
  MAX_STATE_DIR_ENTRIES,
  MAX_CONNECTIONS,
  MAX_CONNECTIONS_PER_PEER,
  MAX_MCP_BODY_BYTES,
  MCP_IDLE_TIMEOUT_MS,
  MAX_MCP_IDLE_S,
} from "./limits.js";
export { MCP_PATH } from "./mcpEndpoint.js";
export { WarmPool } from "./pool.js";
export { RemoteSession } from "./remoteSession.js";
