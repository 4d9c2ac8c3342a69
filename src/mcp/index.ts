/** The MCP client (M-1, M-2, M-5): the `mcp` settings section, trust in project entries, and the servers of a session. */
export { MAX_MCP_SERVERS } from "./limits.js";
export { isStdioEntry, McpSection, type McpHttpEntry, type McpServerEntry, type McpStdioEntry, type McpValue } from "./section.js";
export { serverNameProblem } from "./names.js";
export { entryHash, McpApprovals, MCP_APPROVALS_FILE } from "./approvals.js";
export { resolveServers, MCP_BASE_ENV, type McpDiagnostic, type ResolvedServer, type ResolvedServers } from "./resolve.js";
