/** albedo as an MCP server (P-1..P-5): the session's kernel, skills, prompts and resources to any MCP client, in both protocol eras. */
export { buildServer, SERVER_NAME } from "./server.js";
export { ConnectionSessions, HandleTable, type OpenedSession } from "./sessions.js";
export { TaskStore } from "./tasks.js";
export { MAX_PYTHON_CODE_BYTES, MAX_PYTHON_TIMEOUT_S, MAX_QUEUED_PYTHON_CALLS, MCP_SERVE_MAX_MESSAGE_BYTES, PYTHON_PROGRESS_INTERVAL_MS, PYTHON_TASK_AFTER_MS, ROOTS_TIMEOUT_MS, MAX_NOISE_LINES, MAX_NOISE_CHECK_BYTES } from "./limits.js";
