/**
 * The function tools of MCP servers in tool mode (M-4): each allowed tool of a running server is a
 * tool `mcp__SERVER__TOOL` with the server's own input schema. The runtime validates the arguments
 * against it before sending (the hub does), so a wrong call comes back to the model as the error
 * naming the field, and the turn goes on.
 */
import { z } from "zod";
import { AppError } from "../../errors/index.js";
import { TOOL_ERROR_PREFIX } from "../../model/index.js";
import { MAX_MCP_FUNCTION_TOOLS, mcpFunctionName } from "../mcpContext.js";
import { boundToolText } from "./bounds.js";
import type { McpTurnAnswer, McpTurnServers, McpTurnTool, Tool, TurnMcp } from "./tool.js";

const anyObject = z.record(z.string(), z.unknown());

/**
 * The function tools of `servers` (as `mcp` listed them), one per allowed tool up to MAX_MCP_FUNCTION_TOOLS
 * (the rest stay reachable from Python); names that would collide get their hashed form.
 */
export function mcpTools(mcp: TurnMcp, servers: McpTurnServers): Tool[] {
  const all = servers.flatMap((server) => server.tools).slice(0, MAX_MCP_FUNCTION_TOOLS);
  const counts = new Map<string, number>();
  for (const tool of all) counts.set(mcpFunctionName(tool.server, tool.tool), (counts.get(mcpFunctionName(tool.server, tool.tool)) ?? 0) + 1);
  return all.map((tool) => {
    const plain = mcpFunctionName(tool.server, tool.tool);
    return mcpTool(mcp, tool, counts.get(plain)! > 1 ? mcpFunctionName(tool.server, tool.tool, true) : plain) as Tool;
  });
}

function mcpTool(mcp: TurnMcp, tool: McpTurnTool, name: string): Tool<Record<string, unknown>> {
  const qualified = `${tool.server}.${tool.tool}`;
  return {
    name,
    description: `${tool.description || qualified} (MCP tool ${qualified})`,
    schema: anyObject,
    parameters: parametersOf(tool.inputSchema),
    async run(args, context) {
      try {
        return answerText(qualified, await mcp.call(qualified, args, context.signal));
      } catch (error) {
        // A refusal (bad arguments, unknown tool, deadline) is the model's to read; anything else is the turn's.
        if (error instanceof AppError && error.code !== "cancelled") return `${TOOL_ERROR_PREFIX}${qualified}: ${error.message}`;
        throw error;
      }
    },
  };
}

/** A schema providers accept: an object schema, as the server gave it (without its dialect marker). */
function parametersOf(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest.type === "object" ? rest : { type: "object", properties: {} };
}

/** What the model reads of an answer: its value as text (JSON for structured ones), its images named, bounded. */
function answerText(qualified: string, answer: McpTurnAnswer): string {
  if (answer.is_error) return boundToolText(`${TOOL_ERROR_PREFIX}${qualified} failed: ${answer.error_text ?? String(answer.value ?? "")}`).text;
  const value = textOf(answer.value);
  const images = answer.images.length === 0 ? "" : `\n[${answer.images.length} image${answer.images.length === 1 ? "" : "s"}: ${answer.images.map((image) => image.mime).join(", ")}]`;
  const text = `${value}${images}`;
  return boundToolText(text === "" ? "(empty result)" : text).text;
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  // Several text parts: one after another, as the server wrote them.
  if (Array.isArray(value) && value.every((part) => typeof part === "string")) return value.join("\n\n");
  return JSON.stringify(value, null, 1);
}
