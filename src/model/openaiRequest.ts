import type { ChatCompletionCreateParamsStreaming, ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { imagesLine, type ChatMessage, type ModelRequest, type ToolSpec } from "./adapter.js";

type ToolMessage = Extract<ChatMessage, { role: "tool" }>;
type UserMessage = Extract<ChatMessage, { role: "user" }>;

/** The chat-completions body for `request`: streamed, usage asked for, tools as functions (omitted when none). */
export function chatCompletionParams(model: string, request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model,
    messages: toOpenAIMessages(request.messages),
    stream: true,
    // Without it a stream carries no token counts; O-8 prefers reported usage to an estimate.
    stream_options: { include_usage: true },
  };
  // Some servers refuse an empty `tools` list; no tools means no field.
  return request.tools.length === 0 ? params : { ...params, tools: request.tools.map(toOpenAITool) };
}

/**
 * The messages on the wire. Tool messages carry text only (I-2), so after a step's tool results
 * (a run of tool messages) one user message carries the images they hold: a line naming each
 * call's images, the notes on those not sent, then the images.
 */
function toOpenAIMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  const wire: ChatCompletionMessageParam[] = [];
  let step: ToolMessage[] = [];
  for (const [index, message] of messages.entries()) {
    wire.push(toOpenAIMessage(message));
    if (message.role !== "tool") continue;
    step.push(message);
    if (messages[index + 1]?.role === "tool") continue;
    const carrier = imagesCarrier(step);
    if (carrier !== undefined) wire.push(toOpenAIUserMessage(carrier));
    step = [];
  }
  return wire;
}

function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role === "user") return toOpenAIUserMessage(message);
  if (message.role === "tool") return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
  if (message.role !== "assistant") return message;
  if (!message.tool_calls || message.tool_calls.length === 0) return { role: "assistant", content: message.content };
  return {
    role: "assistant",
    // The API wants null, not "", beside tool calls when there is no prose.
    content: message.content.length > 0 ? message.content : null,
    tool_calls: message.tool_calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })),
  };
}

/** The user message that carries the images of one step's results; undefined when none had any. */
function imagesCarrier(step: readonly ToolMessage[]): UserMessage | undefined {
  const shown = step.flatMap((result) => (result.images === undefined ? [] : [{ id: result.tool_call_id, images: result.images }]));
  if (shown.length === 0) return undefined;
  const lines = [...shown.map(({ id, images }) => imagesLine(id, images)), ...shown.flatMap(({ images }) => images.notes ?? [])];
  return { role: "user", content: lines.join("\n"), images: shown.flatMap(({ images }) => images.sent) };
}

function toOpenAITool(tool: ToolSpec): ChatCompletionTool {
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } } };
}

/** A user message: its text, then each image as an `image_url` part with a data URL. */
function toOpenAIUserMessage(message: UserMessage): ChatCompletionMessageParam {
  const images = message.images ?? [];
  if (images.length === 0) return { role: "user", content: message.content };
  return {
    role: "user",
    content: [
      { type: "text", text: message.content },
      ...images.map((image) => ({ type: "image_url" as const, image_url: { url: `data:${image.mime};base64,${image.data}` } })),
    ],
  };
}
