/** Bounds and deadlines of albedo as an MCP server (P-1..P-4): every wait and every read a client can drive, named once. */

/** One message read from a client (a stdio line, an HTTP body). Past it the stdio connection is closed, with a line on stderr saying why. */
export const MCP_SERVE_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** The `code` of one `python` call, in UTF-8 bytes; a larger one is refused before it reaches the kernel. */
export const MAX_PYTHON_CODE_BYTES = 1024 * 1024;
/** `python` calls waiting behind the running one; past it a call is refused at once, saying so. */
export const MAX_QUEUED_PYTHON_CALLS = 32;
/** A `python` call's deadline unless `timeout_s` says otherwise; past it the cell is interrupted. */
export const DEFAULT_PYTHON_TIMEOUT_S = 600;
/** The largest `timeout_s` a call may ask for. */
export const MAX_PYTHON_TIMEOUT_S = 3600;
/** How often a running cell tells a client that sent a progress token that it still runs. */
export const PYTHON_PROGRESS_INTERVAL_MS = 2000;
/** Resources in one page of resources/list; the rest come with its cursor. */
export const RESOURCES_PAGE_SIZE = 200;
/** How long the server waits for the client's roots/list answer before it takes the current directory. */
export const ROOTS_TIMEOUT_MS = 5000;
/** Lines of protocol noise (what is not JSON-RPC) a connection writes to stderr; past it they are counted only. */
export const MAX_NOISE_LINES = 20;
/** Skills in one page of skills/list (Skills over MCP); the rest come with its cursor. */
export const SKILLS_PAGE_SIZE = 100;
/** Children in one page of resources/directory/read; the rest come with its cursor. */
export const DIRECTORY_PAGE_SIZE = 200;
/** Bytes of skill files one publication of Skills over MCP reads over all skills (each skill also within SKILL_LIMITS.bytes); skills past it are left out, with a warning. */
export const MAX_PUBLISHED_SKILL_BYTES = 64 * 1024 * 1024;
/** How long a `python` call from a client that declares the Tasks extension waits for its cell before it answers with a task instead. */
export const PYTHON_TASK_AFTER_MS = 5000;
/** The poll interval a task suggests to its client (`pollIntervalMs`). */
export const TASK_POLL_INTERVAL_MS = 500;
/** How long a finished task's result stays readable by `tasks/get` (its `ttlMs`). */
export const TASK_TTL_MS = 10 * 60_000;
/** Tasks kept at once (running and finished); past it the oldest finished one is forgotten, and with none finished a new cell answers as a plain call. */
export const MAX_MCP_TASKS = 256;
/** A stdio line up to this size is parsed once more to say on stderr when it is not JSON (the SDK skips such lines silently); a longer one only has its first byte looked at. */
export const MAX_NOISE_CHECK_BYTES = 64 * 1024;
