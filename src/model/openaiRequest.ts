import type { ChatCompletionCreateParamsStreaming, ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import type { ChatMessage, ModelRequest, ToolSpec } from "./adapter.js";

/** The chat-completions body for `request`: streamed, usage asked for, tools as functions (omitted when none). */
export function chatCompletionParams(model: string, request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const params: ChatCompletionCreateParamsStreaming = {
    model,
    messages: request.messages.map(toOpenAIMessage),
    stream: true,
    // Without it a stream carries no token counts; O-8 prefers reported usage to an estimate.
    stream_options: { include_usage: true },
  };
  // Some servers refuse an empty `tools` list; no tools means no field.
  return request.tools.length === 0 ? params : { ...params, tools: request.tools.map(toOpenAITool) };
}

function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role === "user") return toOpenAIUserMessage(message);
  if (message.role !== "assistant") return message;
  if (!message.tool_calls || message.tool_calls.length === 0) return { role: "assistant", content: message.content };
  return {
    role: "assistant",
    // The API wants null, not "", beside tool calls when there is no prose.
    content: message.content.length > 0 ? message.content : null,
    tool_calls: message.tool_calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })),
  };
}

function toOpenAITool(tool: ToolSpec): ChatCompletionTool {
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } } };
}

/** A user message: its text, then each image as an `image_url` part with a data URL (tool messages carry text only). */
function toOpenAIUserMessage(message: Extract<ChatMessage, { role: "user" }>): ChatCompletionMessageParam {
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
