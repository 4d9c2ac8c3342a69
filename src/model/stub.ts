/**
 * The `stub` adapter (O-7): replays the replies of a script file, one per call, in order — for
 * demos, docs and tests without a network. Prose streams through `onText` word by word.
 */
import { setImmediate, setTimeout } from "node:timers/promises";
import { IMAGES_OF_CALL_PREFIX, type AdapterOptions, type ChatMessage, type ModelAdapter, type ModelEnv, type ModelReply, type ModelRequest, type ToolCall } from "./adapter.js";
import { interruptedError, ModelError } from "./errors.js";
import type { ModelSettings } from "./resolve.js";
import { readStubScript, type StubEntry } from "./stubScript.js";

/** `describe().model` when `model.name` is unset. */
export const STUB_MODEL_NAME = "stub";

/** The adapter replaying `settings.script`; throws ModelError `config` when it is unset or not a usable script. */
export async function createStubAdapter(settings: ModelSettings, _env: ModelEnv, _options: AdapterOptions): Promise<ModelAdapter> {
  const file = settings.script;
  if (!file) throw new ModelError("config", "model.script is not set: the stub provider replays the replies of that JSON file (see docs/turns.md)");
  const { replies } = await readStubScript(file);
  const description = { provider: "stub", model: settings.name ?? STUB_MODEL_NAME, mode: settings.mode, contextTokens: settings.contextTokens };
  let next = 0;
  return {
    describe: () => description,
    async complete(request: ModelRequest): Promise<ModelReply> {
      if (request.signal.aborted) throw interruptedError();
      const index = next;
      const entry = replies[index];
      if (!entry) {
        throw new ModelError("script_exhausted", `the stub script ${file} has no reply left: its ${replies.length} replies were all used, and this is call ${index + 1}`);
      }
      next += 1;
      checkExpectation(entry, request.messages, `the stub script ${file}, reply ${index + 1},`);
      await streamWords(entry.text ?? "", entry.delay_ms ?? 0, request);
      return replyOf(entry, index);
    },
  };
}

/** `text` cut into words, each with the whitespace before it; they join back to `text`. */
export function wordDeltas(text: string): string[] {
  const words = text.match(/\s*\S+/g) ?? [];
  const tail = text.slice(words.join("").length);
  return tail.length > 0 ? [...words, tail] : words;
}

async function streamWords(text: string, delayMs: number, request: ModelRequest): Promise<void> {
  for (const delta of wordDeltas(text)) {
    try {
      // A pause between words, even of 0 ms, so an interrupt can land in the middle of a reply.
      await (delayMs > 0 ? setTimeout(delayMs, undefined, { signal: request.signal }) : setImmediate(undefined, { signal: request.signal }));
    } catch {
      throw interruptedError();
    }
    if (request.signal.aborted) throw interruptedError();
    request.onText?.(delta);
  }
}

function replyOf(entry: StubEntry, index: number): ModelReply {
  const toolCalls: ToolCall[] = (entry.tool_calls ?? []).map((call, position) => ({
    id: call.id ?? `stub_${index + 1}_${position + 1}`,
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  const finishReason = entry.finish_reason ?? (toolCalls.length > 0 ? "tool_calls" : "stop");
  const reply = { text: entry.text ?? "", toolCalls, finishReason };
  return entry.usage ? { ...reply, usage: { promptTokens: entry.usage.prompt_tokens, completionTokens: entry.usage.completion_tokens } } : reply;
}

/**
 * An entry with `expect_tool` answers only a request that ends with the result of a call to that
 * tool, or with that result and then a user message of image lines (how chat completions carry a
 * step's images, I-2).
 */
function checkExpectation(entry: StubEntry, messages: readonly ChatMessage[], where: string): void {
  if (entry.expect_tool === undefined) return;
  const step = isImagesMessage(messages.at(-1)) ? messages.slice(0, -1) : messages;
  const answered = answeredTool(step);
  if (answered === entry.expect_tool) return;
  const found = answered === undefined ? `the request ends with a ${messages.at(-1)?.role ?? "missing"} message` : `the request ends with a result of ${answered}`;
  throw new ModelError("malformed", `${where} expects to answer a result of ${entry.expect_tool}, but ${found}`);
}

/** Whether `message` is the user message that follows a step's tool results with their images: every line an images line. */
function isImagesMessage(message: ChatMessage | undefined): boolean {
  return message?.role === "user" && message.content.split("\n").every((line) => line.startsWith(IMAGES_OF_CALL_PREFIX));
}

/** The name of the tool whose result ends `messages`, found through the assistant message that called it. */
function answeredTool(messages: readonly ChatMessage[]): string | undefined {
  const last = messages.at(-1);
  if (last?.role !== "tool") return undefined;
  for (let index = messages.length - 2; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === "assistant") return message.tool_calls?.find((call) => call.id === last.tool_call_id)?.name;
  }
  return undefined;
}
