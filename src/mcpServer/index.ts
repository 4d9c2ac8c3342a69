/** albedo as an MCP server (P-1..P-4): the session's kernel, skills, prompts and resources to any MCP client. */
export { AlbedoMcpServer, SERVER_NAME } from "./server.js";
export { MAX_PYTHON_CODE_BYTES, MAX_PYTHON_TIMEOUT_S, MAX_QUEUED_PYTHON_CALLS, MCP_SERVE_MAX_MESSAGE_BYTES, PYTHON_PROGRESS_INTERVAL_MS, ROOTS_TIMEOUT_MS, MAX_NOISE_LINES } from "./limits.js";
