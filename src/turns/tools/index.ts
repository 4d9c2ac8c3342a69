/** The tools a turn offers (O-3, O-5) and how one call is checked and run. */
import { z } from "zod";
import type { CheckedImage } from "../../images/index.js";
import { jsonTextNestingDepth, parseJsonWellFormed } from "../../json/index.js";
import { MAX_TOOL_ARGUMENT_DEPTH, TOOL_ERROR_PREFIX, type ToolCall, type ToolSpec } from "../../model/index.js";
import type { SessionView } from "../../session/index.js";
import type { ToolMode } from "../context.js";
import { pythonTool } from "./python.js";
import { readTool } from "./read.js";
import { skillTool } from "./skill.js";
import { toolSpec, type Tool, type ToolContext } from "./tool.js";

export { describeOutput, TurnInterrupted } from "./python.js";
export { boundToolText, GatheredText } from "./bounds.js";
export { mcpTools } from "./mcp.js";
export { skillText } from "./skill.js";
export { toolSpec } from "./tool.js";
export type { McpTurnAnswer, ToolAnswer, McpTurnServers, McpTurnTool, Tool, ToolContext, TurnHost, TurnMcp } from "./tool.js";

/** A turn's tools and the specs the model sees, for one view and mode. */
export interface Toolset {
  readonly tools: readonly Tool[];
  readonly specs: readonly ToolSpec[];
}

const toolsets = new WeakMap<SessionView, Map<ToolMode, Toolset>>();

/**
 * `python` always; in tool mode also `read`, and `skill` when at least one skill is enabled (absent,
 * not empty, otherwise). A view is immutable, so its toolset (schemas and their JSON Schema) is
 * built once per mode and kept with it.
 */
export function toolsFor(view: SessionView, mode: ToolMode): Toolset {
  const byMode = toolsets.get(view) ?? new Map<ToolMode, Toolset>();
  toolsets.set(view, byMode);
  let toolset = byMode.get(mode);
  if (toolset === undefined) {
    const tools = buildTools(view, mode);
    toolset = { tools, specs: tools.map(toolSpec) };
    byMode.set(mode, toolset);
  }
  return toolset;
}

function buildTools(view: SessionView, mode: ToolMode): Tool[] {
  const tools: Tool[] = [pythonTool as Tool];
  if (mode !== "tool") return tools;
  const [first, ...rest] = view.snapshot.skills.map((skill) => skill.name);
  if (first !== undefined) tools.push(skillTool([first, ...rest]) as Tool);
  tools.push(readTool as Tool);
  return tools;
}

/**
 * Runs one tool call and returns its result for the model, plus a problem text when the call
 * itself was wrong (unknown tool, malformed or invalid arguments): the model is told, and the turn
 * goes on. Throws only what the tool throws (an interrupt, a dead kernel).
 */
export async function runToolCall(call: ToolCall, tools: readonly Tool[], context: ToolContext): Promise<{ result: string; images?: readonly CheckedImage[]; problem?: string }> {
  const tool = tools.find((candidate) => candidate.name === call.name);
  if (tool === undefined) {
    const problem = `there is no tool "${call.name}"; the tools are ${tools.map((t) => t.name).join(", ")}`;
    return { result: `${TOOL_ERROR_PREFIX}${problem}.`, problem };
  }
  if (jsonTextNestingDepth(call.arguments, MAX_TOOL_ARGUMENT_DEPTH) > MAX_TOOL_ARGUMENT_DEPTH) {
    const problem = `the arguments of ${call.name} nest deeper than MAX_TOOL_ARGUMENT_DEPTH (${MAX_TOOL_ARGUMENT_DEPTH} levels of arrays and objects)`;
    return { result: `${TOOL_ERROR_PREFIX}${problem}; send a flatter JSON object.`, problem };
  }
  let value: unknown;
  try {
    // The arguments are JSON text inside the reply: an escape in them is a second way in for a lone surrogate.
    value = parseJsonWellFormed(call.arguments.trim() === "" ? "{}" : call.arguments);
  } catch (error) {
    const problem = `the arguments of ${call.name} are not valid JSON (${(error as Error).message})`;
    return { result: `${TOOL_ERROR_PREFIX}${problem}; send one JSON object.`, problem };
  }
  const checked = tool.schema.safeParse(value);
  if (!checked.success) {
    const problem = `invalid arguments for ${call.name}: ${z.prettifyError(checked.error).replace(/\s*\n\s*/g, " ")}`;
    return { result: `${TOOL_ERROR_PREFIX}${problem}.`, problem };
  }
  const answer = await tool.run(checked.data, context);
  return typeof answer === "string" ? { result: answer } : { result: answer.text, images: answer.images };
}
