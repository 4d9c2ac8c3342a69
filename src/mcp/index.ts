/** The MCP client (M-1, M-2, M-5): the `mcp` settings section, trust in project entries, and the servers of a session. */
export { DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_STARTUP_TIMEOUT_MS, MAX_MCP_CALL_TIMEOUT_MS, MAX_MCP_LINK_TEXT_CHARS, MAX_MCP_SERVERS, MCP_MAX_RESULT_BYTES } from "./limits.js";
export { isStdioEntry, McpSection, secretVariables, type McpHttpEntry, type McpServerEntry, type McpStdioEntry, type McpValue } from "./section.js";
export { serverNameProblem } from "./names.js";
export { entryHash, McpApprovals, MCP_APPROVALS_FILE } from "./approvals.js";
export { resolveServers, MCP_BASE_ENV, type McpDiagnostic, type ResolvedServer, type ResolvedServers } from "./resolve.js";
export { DEFAULT_MCP_CLIENT_INFO, McpHub, NO_MCP_CHANGE, type McpCallOptions, type McpHubOptions, type McpReloadChange, type McpServerStatus, type McpToolsChanged } from "./hub.js";
export { SharedServers } from "./sharedServers.js";
export { mcpHostPlaces, type McpHostPlaces } from "./hostPlaces.js";
export type { McpCallResult, McpImage, McpLink, McpProgress, McpReadResult } from "./result.js";
export type { McpToolDetail, McpToolInfo } from "./toolList.js";
export type { McpClientInfo } from "./connection.js";
