/** Bounds and deadlines of the MCP client (M-1, M-2, M-5). Every wait and every read a server can drive is named here once. */

/** From spawn (or the first HTTP request) to initialize answered and the tool list read, unless `startup_timeout_ms` says otherwise. */
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 30_000;
/** One tools/call, unless `call_timeout_ms` says otherwise. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;
/**
 * The share of the startup deadline the `server/discover` probe that tells a server's era (M-6)
 * may take. A stdio server silent that long is taken as legacy (the handshake follows in the rest
 * of the deadline); a short probe would take a slow-starting server (npx, a cold Python) for one.
 */
export const MCP_PROBE_SHARE_OF_STARTUP = 0.5;
/** A task's poll interval as albedo keeps it, whatever `pollIntervalMs` the server asks for: at least this... */
export const MIN_MCP_TASK_POLL_MS = 50;
/** ...and at most this, so a finished task is seen soon. */
export const MAX_MCP_TASK_POLL_MS = 2_000;
/** Interrupted calls whose late answers are still listened for (a task created as the cell was interrupted is then cancelled). */
export const MAX_MCP_LATE_ANSWERS = 64;
/** `tasks/get` polls of one task; the call's deadline usually ends it first. */
export const MAX_MCP_TASK_POLLS = 20_000;
/** The `tasks/cancel` sent when a task's cell is interrupted or its deadline passes. */
export const MCP_TASK_CANCEL_TIMEOUT_MS = 2_000;
/** Resource links remembered per server, so `mcp.read(uri)` knows which server a link came from. */
export const MAX_MCP_REMEMBERED_LINKS = 256;
/** Characters of a link's uri, name or description as the kernel gets them. */
export const MAX_MCP_LINK_TEXT_CHARS = 2048;
/** Links kept from one tool result; the rest are counted in a note. */
export const MAX_MCP_LINKS_PER_RESULT = 64;
/** The smallest `startup_timeout_ms` / `call_timeout_ms` a setting may ask for. */
export const MIN_MCP_TIMEOUT_MS = 100;
/** The largest `startup_timeout_ms` a setting may ask for. */
export const MAX_MCP_STARTUP_TIMEOUT_MS = 600_000;
/** The largest `call_timeout_ms` a setting may ask for. */
export const MAX_MCP_CALL_TIMEOUT_MS = 600_000;

/**
 * A tool result as received (JSON bytes). It must fit in one RPC reply to the kernel
 * (RPC_MAX_MESSAGE_BYTES, 1 MiB) with room for the envelope; a larger one is limit_exceeded.
 */
export const MCP_MAX_RESULT_BYTES = 768 * 1024;
/**
 * One message read from a server (a stdio line, a JSON body, one SSE event). Past it the
 * connection is taken as broken: dropped and restarted, its calls in flight limit_exceeded.
 */
export const MCP_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Nesting levels of a tool result; a deeper one is limit_exceeded before anything recurses into it. */
export const MAX_MCP_RESULT_DEPTH = 64;

/** Tools kept from one server's list; past it the list is cut with a diagnostic. */
export const MAX_MCP_TOOLS_PER_SERVER = 1024;
/** Pages of one tools/list walk (a server handing out cursors forever is cut here). */
export const MAX_MCP_TOOL_LIST_PAGES = 64;
/** Characters of a tool name (the MCP specification's own bound). */
export const MAX_MCP_TOOL_NAME_LENGTH = 128;
/** Characters of a tool's full description (describe). */
export const MAX_MCP_DESCRIPTION_CHARS = 4096;
/** Characters of a progress notification's message passed on to the caller; the rest is cut. */
export const MAX_MCP_PROGRESS_MESSAGE_CHARS = 200;
/** Characters of a tool's one-line summary (tools). */
export const MAX_MCP_SUMMARY_CHARS = 200;
/** JSON bytes of one tool's input or output schema; a larger one is treated as not a schema. */
export const MAX_MCP_SCHEMA_BYTES = 256 * 1024;
/** Diagnostics kept per server; the rest are counted in one line. */
export const MAX_MCP_DIAGNOSTICS_PER_SERVER = 16;
/** Schema violations named in one invalid_params message. */
export const MAX_MCP_ARGUMENT_ERRORS = 8;

/** Servers in one settings section, and started for one session. */
export const MAX_MCP_SERVERS = 32;
/** Restarts of a server that exits (or breaks its connection) before it is `failed`. */
export const MAX_MCP_RESTARTS = 3;
/** Wait before the first restart; each further one waits twice as long as the one before. */
export const MCP_RESTART_BACKOFF_MS = 200;

/** Shutdown ladder of a stdio server: from closing its stdin to SIGTERM of its process group. */
export const MCP_STDIN_CLOSE_WAIT_MS = 2_000;
/** Shutdown ladder: from SIGTERM of the process group to SIGKILL. */
export const MCP_SIGTERM_WAIT_MS = 2_000;
/** Shutdown ladder: from SIGKILL to giving up on the group (it cannot survive SIGKILL; this only bounds the wait). */
export const MCP_SIGKILL_WAIT_MS = 2_000;
/** How often the ladder looks whether the process group is gone. */
export const MCP_GROUP_POLL_MS = 20;
/** An HTTP session's DELETE when the connection closes. */
export const MCP_HTTP_CLOSE_TIMEOUT_MS = 2_000;

/** Lines of a server's stderr logged per MCP_STDERR_WINDOW_MS; the rest are counted in one line. */
export const MCP_STDERR_MAX_LINES = 100;
/** Bytes of a server's stderr logged per MCP_STDERR_WINDOW_MS. */
export const MCP_STDERR_MAX_BYTES = 32 * 1024;
/** The window the stderr bounds count in. */
export const MCP_STDERR_WINDOW_MS = 60_000;
/** Characters of one stderr (or garbage stdout) line as logged; the rest of the line is dropped. */
export const MCP_STDERR_LINE_MAX_CHARS = 500;
/** Last stderr lines kept for the diagnostic of a server that failed. */
export const MCP_STDERR_TAIL_LINES = 10;

/** Bytes of an HTTP error body read to quote in a diagnostic. */
export const MAX_MCP_HTTP_ERROR_BODY_BYTES = 16 * 1024;
/** Characters of server text (an error body, a message) quoted in one diagnostic or error. */
export const MAX_MCP_QUOTE_CHARS = 500;

/** Settings bounds of one server entry. */
export const MAX_MCP_COMMAND_LENGTH = 4096;
export const MAX_MCP_ARGS = 256;
export const MAX_MCP_ARG_LENGTH = 8192;
export const MAX_MCP_ENV_VARS = 256;
export const MAX_MCP_ENV_VALUE_LENGTH = 32 * 1024;
export const MAX_MCP_ENV_NAME_LENGTH = 128;
export const MAX_MCP_URL_LENGTH = 2048;
export const MAX_MCP_HEADERS = 64;
export const MAX_MCP_HEADER_VALUE_LENGTH = 8192;
export const MAX_MCP_GLOBS = 256;
export const MAX_MCP_GLOB_LENGTH = 256;

/** The approvals file (M-1): its size, its entries, and its lock's wait. */
export const MAX_MCP_APPROVALS_BYTES = 1024 * 1024;
export const MAX_MCP_APPROVALS = 4096;
export const MCP_APPROVALS_LOCK_TIMEOUT_MS = 10_000;
export const MCP_APPROVALS_LOCK_RETRY_MS = 5;

/** Most workspace files one approval of a project server binds (its script, its module's package). */
export const MAX_MCP_BOUND_FILES = 256;
/** Most bytes of those files, together. */
export const MAX_MCP_BOUND_BYTES = 16 * 1024 * 1024;
