/** Bounds and deadlines of the daemon (D-1). */

/**
 * Levels of arrays and objects in one request body (the body object is 1). Our bodies need a few;
 * a deeper one is refused before any handler copies, hashes or stores it (B: deep nesting).
 */
export const MAX_BODY_DEPTH = 64;
/** Sessions one daemon holds open at once; each owns a kernel process. */
export const MAX_SESSIONS = 16;
/** WebSocket clients attached to one session's stream. */
export const MAX_STREAM_CLIENTS = 16;
/** Outputs one `execute` response carries; later ones still reach the stream. */
export const MAX_EXECUTE_OUTPUTS = 1_000;
/** Bytes of output (content JSON) one `execute` response carries, and so the daemon keeps per execution; later outputs still reach the stream. */
export const MAX_EXECUTE_OUTPUT_BYTES = 16 * 1024 * 1024;
/** How long a clean shutdown may take closing sessions before the process exits anyway. */
export const SHUTDOWN_TIMEOUT_MS = 20_000;
/** Bytes a stream client may have queued, counting the message about to be sent, before it is dropped as too slow. */
export const MAX_STREAM_BUFFER_BYTES = 8 * 1024 * 1024;
/** Bytes of one stream message; a larger event is cut with a marker before it is sent. Below MAX_STREAM_BUFFER_BYTES, so one message never passes that alone. */
export const MAX_STREAM_MESSAGE_BYTES = 4 * 1024 * 1024;
/** How often the daemon checks that an external session's kernel process (K-13) still runs. */
export const KERNEL_PID_POLL_MS = 1_000;
/** Bytes the daemon's log file may reach; the write that would pass it first rotates the file (daemon.log -> daemon.log.1). */
export const MAX_LOG_FILE_BYTES = 8 * 1024 * 1024;
/** Rotated log files kept (daemon.log.1 newest .. daemon.log.N oldest); the log uses at most (N + 1) * MAX_LOG_FILE_BYTES. */
export const LOG_ROTATIONS_KEPT = 3;
/** Bytes of one log entry; a longer one (a huge stack, say) is cut, with a note saying so. */
export const MAX_LOG_ENTRY_BYTES = 16 * 1024;
/** Window in which repeats of one log message are counted: the first MAX_LOG_REPEATS are written, the rest summed up at its end. */
export const LOG_REPEAT_WINDOW_MS = 60_000;
/** Entries with the same level and message written per LOG_REPEAT_WINDOW_MS. */
export const MAX_LOG_REPEATS = 20;
/** Distinct messages counted per window; entries of further messages share one budget of MAX_LOG_REPEATS. */
export const MAX_LOG_REPEAT_KEYS = 256;
/** Entries of the state dir looked at when making it private at start; albedo keeps a handful there. */
export const MAX_STATE_DIR_ENTRIES = 1_024;
/** Open connections the daemon holds at once; past it the oldest connection without the token is closed to make room, or the new one refused. */
export const MAX_CONNECTIONS = 512;
/** Open connections from one peer address (all local users share 127.0.0.1; a Unix socket counts as one peer). */
export const MAX_CONNECTIONS_PER_PEER = 384;
/** How long a connection may stay open before it sent a request with the token; then it is destroyed. */
export const UNTRUSTED_CONNECTION_TIMEOUT_MS = 5_000;
/** How long a refusal written to a socket may take to flush before the socket is destroyed anyway. */
export const REFUSAL_FLUSH_TIMEOUT_MS = 1_000;
/** Seconds a `503 storage_busy` answer asks the client to wait (Retry-After) before sending the request again. */
export const STORAGE_BUSY_RETRY_AFTER_S = 1;
/** Descriptors the daemon holds with no session open and no client connected (measured: 24), with room for its log, database and a request's files. */
export const DAEMON_BASE_FDS = 64;
/**
 * Descriptors one local session holds apart from its RPC connections (measured: about 27 with a
 * sandbox: the kernel's channels and their signalling, the kernel's pipes, the sandbox's pinned
 * directories), with room for more skill roots.
 */
export const SESSION_BASE_FDS = 48;
/** Bytes of one MCP message posted to /mcp: room for the python tool's largest cell (1 MiB) escaped in JSON. */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;
/**
 * How long an MCP session on /mcp may go with no request in flight and no stream open before it is
 * closed with its kernel (`albedo serve --mcp-idle` overrides it). A client that is still running
 * keeps its event stream open; one that died closed it.
 */
export const MCP_IDLE_TIMEOUT_MS = 30 * 60_000;
/** Longest --mcp-idle accepted, in seconds (a week). */
export const MAX_MCP_IDLE_S = 7 * 24 * 3600;

/** How long a web console login link works, once: long enough to click, short enough that a leaked one is dead. */
export const LOGIN_CODE_TTL_MS = 120_000;
/** Most login links waiting to be used at once; issuing another forgets the oldest. */
export const MAX_PENDING_LOGIN_CODES = 16;
/** How long a web console login lasts without being used again. */
export const WEB_SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** Most web console logins kept at once; a new one ends the one used least recently. */
export const MAX_WEB_SESSIONS = 32;
/** Most bytes of one file of the web console's build the daemon serves. */
export const MAX_WEB_ASSET_BYTES = 2 * 1024 * 1024;
/** Most files of the web console's build the daemon reads. */
export const MAX_WEB_ASSETS = 64;
