/** The MCP clients `albedo mcp config` writes an entry for: the command's own list, which the registry's summary names too. */
export const MCP_CLIENTS = ["claude-desktop", "claude-code", "cursor", "codex", "vscode"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];
