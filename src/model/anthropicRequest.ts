/**
 * The Messages API body for a request (O-10). The conversation is OpenAI-shaped (adapter.ts);
 * here system messages become the `system` param, tool results `tool_result` blocks in the user
 * turn after the calls, and consecutive messages of one role one turn, as the API requires.
 * A step's images (I-2) go back inside their calls' `tool_result`s; prompt-cache marks end the
 * stable prefix (tools, system) and the newest history block.
 */
import type {
  CacheControlEphemeral,
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages/messages";
import { jsonTextNestingDepth } from "../json/index.js";
import { MAX_TOOL_ARGUMENT_DEPTH } from "./limits.js";
import { IMAGES_OF_CALL_PREFIX, TOOL_ERROR_PREFIX, type ChatMessage, type MessageImage, type ModelRequest, type ToolCall, type ToolSpec } from "./adapter.js";

/** The API's limit on `cache_control` marks in one request; albedo sets three. */
export const MAX_CACHE_MARKS = 4;
/** The key a tool call's input is sent back under when the model's arguments were not a JSON object (the runner answered that with an error). */
export const UNPARSED_INPUT_KEY = "unparsed_arguments";

const EPHEMERAL: CacheControlEphemeral = { type: "ephemeral" };
/** One label of an images line, as `imageLabel` writes it: `[image N · …]`. */
const IMAGE_LABEL = /\[image \d+ · /g;

type Role = "user" | "assistant";
/** A turn being built; its blocks are this request's own objects, so placing images and marks may change them. */
interface Turn {
  readonly role: Role;
  readonly content: ContentBlockParam[];
}
type Markable = { cache_control?: CacheControlEphemeral | null };
type ImageMedia = Extract<ImageBlockParam["source"], { type: "base64" }>["media_type"];

/**
 * The body for `request`: streamed, capped at `maxTokens`, fields in the order the API caches
 * them (tools, system, messages) so that equal prefixes are equal bytes. Tools and system are
 * omitted when empty.
 */
export function messageParams(model: string, maxTokens: number, request: ModelRequest): MessageCreateParamsStreaming {
  const tools = request.tools.map(toTool);
  const system = request.messages.flatMap((message) => (message.role === "system" && message.content !== "" ? [textBlock(message.content)] : []));
  const messages = conversation(request.messages);
  markLast(tools);
  markLast(system);
  markLast(messages.at(-1)?.content as Markable[] | undefined);
  return {
    model,
    max_tokens: maxTokens,
    stream: true,
    ...(tools.length > 0 ? { tools } : {}),
    ...(system.length > 0 ? { system } : {}),
    messages: messages as MessageParam[],
  };
}

/** The turns of the conversation, system messages left out (they are the `system` param). */
function conversation(messages: readonly ChatMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    const role: Role = message.role === "assistant" ? "assistant" : "user";
    const last = turns.at(-1);
    const blocks = message.role === "user" && message.images?.length ? imageMessageBlocks(message, message.images, last) : blocksOf(message);
    if (blocks.length === 0) continue;
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return turns;
}

function blocksOf(message: Exclude<ChatMessage, { role: "system" }>): ContentBlockParam[] {
  if (message.role === "tool") return [toolResult(message.tool_call_id, message.content)];
  const text = message.content === "" ? [] : [textBlock(message.content)];
  if (message.role === "user") return text;
  return [...text, ...(message.tool_calls ?? []).map(toolUse)];
}

function toolResult(id: string, content: string): ToolResultBlockParam {
  return { type: "tool_result", tool_use_id: id, ...(content === "" ? {} : { content }), ...(content.startsWith(TOOL_ERROR_PREFIX) ? { is_error: true } : {}) };
}

function toolUse(call: ToolCall): ContentBlockParam {
  return { type: "tool_use", id: call.id, name: call.name, input: inputOf(call.arguments) };
}

/**
 * The call's arguments as the object the API wants back; malformed ones, and ones nesting deeper
 * than MAX_TOOL_ARGUMENT_DEPTH (the runner refused both), kept as text under UNPARSED_INPUT_KEY.
 */
function inputOf(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  if (jsonTextNestingDepth(text, MAX_TOOL_ARGUMENT_DEPTH) > MAX_TOOL_ARGUMENT_DEPTH) return { [UNPARSED_INPUT_KEY]: text };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Kept as text below.
  }
  return { [UNPARSED_INPUT_KEY]: text };
}

/**
 * The blocks of a user message carrying images. When every line of it is an images line whose
 * call has a `tool_result` in the turn being built, and the labels count its images, each call's
 * line and images go into that result and nothing is left for the message itself. Otherwise (a
 * message compaction or the image bound rewrote, or images from elsewhere) its text and images
 * stay a user message of their own.
 */
function imageMessageBlocks(message: { readonly content: string }, images: readonly MessageImage[], turn: Turn | undefined): ContentBlockParam[] {
  const placed = turn?.role === "user" ? placeInResults(message.content, images, turn.content) : false;
  if (placed) return [];
  return [...(message.content === "" ? [] : [textBlock(message.content)]), ...images.map(imageBlock)];
}

function placeInResults(text: string, images: readonly MessageImage[], blocks: ContentBlockParam[]): boolean {
  const results = new Map(blocks.flatMap((block) => (block.type === "tool_result" ? [[block.tool_use_id, block] as const] : [])));
  const plan: { result: ToolResultBlockParam; line: string; count: number }[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(IMAGES_OF_CALL_PREFIX)) return false;
    const id = line.slice(IMAGES_OF_CALL_PREFIX.length).split(":", 1)[0] ?? "";
    const result = results.get(id);
    if (result === undefined) return false;
    plan.push({ result, line, count: line.match(IMAGE_LABEL)?.length ?? 0 });
  }
  if (plan.reduce((sum, item) => sum + item.count, 0) !== images.length) return false;
  let next = 0;
  for (const { result, line, count } of plan) {
    const own = images.slice(next, next + count).map(imageBlock);
    next += count;
    const before = typeof result.content === "string" ? [textBlock(result.content)] : (result.content ?? []);
    result.content = [...before, textBlock(line), ...own];
  }
  return true;
}

function imageBlock(image: MessageImage): ImageBlockParam {
  return { type: "image", source: { type: "base64", media_type: image.mime as ImageMedia, data: image.data } };
}

function textBlock(text: string): TextBlockParam {
  return { type: "text", text };
}

function toTool(tool: ToolSpec): Tool {
  return { name: tool.name, description: tool.description, input_schema: { ...tool.parameters, type: "object" } };
}

/** Marks the last of `items` as the end of a cached prefix. */
function markLast(items: Markable[] | undefined): void {
  const last = items?.at(-1);
  if (last !== undefined) last.cache_control = EPHEMERAL;
}
