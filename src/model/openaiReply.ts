/**
 * Reads what an OpenAI-compatible server sends (stream chunks or one whole completion) into a
 * ReplyBuilder. Checked here, at the boundary: a server may send anything. Unknown fields are
 * dropped; only the first choice is read, since albedo never asks for more.
 */
import { z } from "zod";
import { parseShape } from "./shape.js";
import type { ReplyBuilder } from "./replyBuilder.js";

// A few servers send arguments as an object rather than JSON text; its JSON is the closest to what was meant.
const Arguments = z.union([z.string(), z.record(z.string(), z.unknown()).transform((value) => JSON.stringify(value))]).nullish();

const ToolCallPart = z.object({
  index: z.number().int().optional(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: Arguments }).nullish(),
});

const Content = z.object({ content: z.string().nullish(), tool_calls: z.array(ToolCallPart).nullish() });

const Chunk = z.object({
  choices: z.array(z.object({ index: z.number().int().optional(), delta: Content.nullish(), finish_reason: z.string().nullish() })).nullish(),
  usage: z.unknown().optional(),
});

const Completion = z.object({
  choices: z.array(z.object({ index: z.number().int().optional(), message: Content, finish_reason: z.string().nullish() })).min(1),
  usage: z.unknown().optional(),
});

const Count = z.number().int().nonnegative();
const Usage = z.object({
  prompt_tokens: Count,
  completion_tokens: Count,
  // OpenAI's count of the prompt's tokens its automatic prompt cache served; a shape we cannot read is no count.
  prompt_tokens_details: z.object({ cached_tokens: Count.nullish().catch(undefined) }).nullish().catch(undefined),
});

type Parts = z.infer<typeof Content>;

/** Adds one stream chunk (the `count`th, for messages) to `builder`; throws ModelError `malformed` for a chunk of the wrong shape. */
export function readChunk(raw: unknown, count: number, builder: ReplyBuilder): void {
  const chunk = parseShape(Chunk, raw, `part ${count} of the reply stream`, "a chat completion");
  for (const choice of chunk.choices ?? []) {
    if ((choice.index ?? 0) !== 0) continue;
    if (choice.delta) addParts(choice.delta, builder);
    if (choice.finish_reason) builder.finish(choice.finish_reason);
  }
  readUsage(chunk.usage, builder);
}

/** Adds a whole (non-streamed) completion to `builder`; throws ModelError `malformed` for the wrong shape. */
export function readCompletion(raw: unknown, builder: ReplyBuilder): void {
  const completion = parseShape(Completion, raw, "the reply", "a chat completion");
  const choice = completion.choices.find((item) => (item.index ?? 0) === 0) ?? completion.choices[0];
  if (choice) {
    addParts(choice.message, builder);
    if (choice.finish_reason) builder.finish(choice.finish_reason);
  }
  readUsage(completion.usage, builder);
}

function addParts(parts: Parts, builder: ReplyBuilder): void {
  if (parts.content) builder.text(parts.content);
  parts.tool_calls?.forEach((call, position) => {
    // A server that sends whole calls may leave out `index`; their order is then the index.
    builder.toolCall(call.index ?? position, { id: call.id, name: call.function?.name, arguments: call.function?.arguments });
  });
}

/** Usage is a hint (O-8 estimates without it): a shape we cannot read is dropped, not an error. */
function readUsage(raw: unknown, builder: ReplyBuilder): void {
  const usage = Usage.safeParse(raw);
  if (!usage.success) return;
  const cached = usage.data.prompt_tokens_details?.cached_tokens;
  builder.usage({ promptTokens: usage.data.prompt_tokens, completionTokens: usage.data.completion_tokens, ...(typeof cached === "number" ? { cacheReadTokens: cached } : {}) });
}
