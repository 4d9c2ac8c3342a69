/** The daemon domain's public surface: the server, its log, its pool of spares, and the bounds callers show. Its HTTP contract and client are the api domain's. */
export { Daemon, type ListenTarget, type RequestEntry } from "./server.js";
export { DaemonLockedError } from "./state.js";
export { DaemonLog } from "./log.js";
export {
  MAX_SESSIONS,
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
