/**
 * What the model learns of the session's MCP servers (M-4): the bounded `<mcp_servers>` block of
 * message[0], and the names of the function tools tool mode offers for them. Descriptions come from
 * the servers, so they are data: folded onto one line, cut, control characters made visible and
 * XML-escaped, so a server cannot close the block or hide markup in it.
 */
import { createHash } from "node:crypto";
import { escapeXml } from "../skills/index.js";
import { visibleControls } from "../text/index.js";

/** Tools listed per server in the block; past it one line says how many more and how to list them. */
export const MCP_TOOLS_IN_CONTEXT = 24;
/** Characters of a tool's description in the block (its full text is read with `mcp.describe`). */
export const MCP_CONTEXT_DESCRIPTION_CHARS = 120;
/**
 * MCP function tools one request offers in tool mode, in all: providers cap a request's tools (128
 * for OpenAI's chat completions) and every schema costs context. Past it, tools are reached from Python.
 */
export const MAX_MCP_FUNCTION_TOOLS = 96;
/** The longest function-tool name providers accept. */
export const MAX_FUNCTION_TOOL_NAME_LENGTH = 64;
/** Hex digits of the hash that stands in for the end of a function-tool name too long to keep whole. */
const TOOL_NAME_HASH_CHARS = 8;

/** One running server as the block shows it: its tools by qualified name `server.tool`. */
export interface McpContextServer {
  readonly name: string;
  readonly tools: readonly { readonly name: string; readonly description: string }[];
}

function shown(text: string): string {
  return escapeXml(visibleControls(text));
}

function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  const chars = [...line];
  return chars.length <= max ? line : `${chars.slice(0, max - 1).join("")}…`;
}

/** The `<mcp_servers>` block of a session that configures servers; `servers` are the running ones. */
export function renderMcpServers(servers: readonly McpContextServer[]): string {
  const lines = ["<mcp_servers>"];
  if (servers.length === 0) lines.push("(no server is running now: `await mcp.servers()` says why)");
  for (const server of servers) {
    lines.push(`<server name="${shown(server.name)}" tools="${server.tools.length}">`);
    for (const tool of server.tools.slice(0, MCP_TOOLS_IN_CONTEXT)) {
      const description = cut(tool.description, MCP_CONTEXT_DESCRIPTION_CHARS);
      lines.push(`${shown(tool.name)}${description === "" ? "" : ` - ${shown(description)}`}`);
    }
    const more = server.tools.length - MCP_TOOLS_IN_CONTEXT;
    if (more > 0) lines.push(`(${more} more: \`await mcp.tools("${shown(server.name)}")\` lists them)`);
    lines.push("</server>");
  }
  lines.push("</mcp_servers>");
  return `${lines.join("\n")}\n`;
}

/**
 * The function-tool name of `server.tool` in tool mode: `mcp__SERVER__TOOL`, with characters
 * providers refuse as `_`; a name over MAX_FUNCTION_TOOL_NAME_LENGTH keeps its start and ends in a
 * stable hash of the whole qualified name, so it is the same in every turn; `hashed` asks for that
 * form for any length (two names that only differ in characters replaced by `_`).
 */
export function mcpFunctionName(server: string, tool: string, hashed = false): string {
  const name = `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_");
  if (name.length <= MAX_FUNCTION_TOOL_NAME_LENGTH && !hashed) return name;
  const hash = createHash("sha256").update(`${server}.${tool}`).digest("hex").slice(0, TOOL_NAME_HASH_CHARS);
  return `${name.slice(0, MAX_FUNCTION_TOOL_NAME_LENGTH - TOOL_NAME_HASH_CHARS - 1)}_${hash}`;
}
