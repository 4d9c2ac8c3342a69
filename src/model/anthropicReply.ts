/**
 * Reads what a Messages API server sends (stream events or one whole message) into a
 * ReplyBuilder (O-10). Checked here, at the boundary: a server may send anything. Event and
 * block types albedo does not use (thinking, server tools, ones added later) are skipped.
 */
import { z } from "zod";
import type { ModelUsage } from "./adapter.js";
import { jsonNestingDepth } from "../json/index.js";
import { ModelError } from "./errors.js";
import { MAX_TOOL_ARGUMENT_DEPTH } from "./limits.js";
import type { ReplyBuilder } from "./replyBuilder.js";
import { parseShape } from "./shape.js";

/** The API's stop reasons in the builder's words; any other is passed as it is (and becomes `other`). */
const STOP_REASONS: Readonly<Record<string, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "content_filter",
};

const Count = z.number().int().nonnegative().nullish();
const UsageShape = z.object({ input_tokens: Count, output_tokens: Count, cache_creation_input_tokens: Count, cache_read_input_tokens: Count });
type RawUsage = z.infer<typeof UsageShape>;

const Block = z.object({ type: z.string(), text: z.string().optional(), id: z.string().optional(), name: z.string().optional(), input: z.unknown().optional() });
const Delta = z.object({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional() });
const EventType = z.object({ type: z.string() });
const Index = z.number().int().nonnegative();
const EVENTS = {
  message_start: z.object({ message: z.object({ usage: z.unknown().optional() }) }),
  content_block_start: z.object({ index: Index, content_block: Block }),
  content_block_delta: z.object({ index: Index, delta: Delta }),
  message_delta: z.object({ delta: z.object({ stop_reason: z.string().nullish() }), usage: z.unknown().optional() }),
} as const;
const WholeMessage = z.object({ content: z.array(Block), stop_reason: z.string().nullish(), usage: z.unknown().optional() });

/** One reply's reading: the blocks seen so far, the usage as reported, the stop reason. */
export class MessageReader {
  /** Tool-use blocks by index, and whether input JSON came for them in deltas (else the start's `input` is it). */
  readonly #toolBlocks = new Map<number, { input: unknown; streamed: boolean }>();
  #usage: RawUsage = {};
  #stop: string | undefined;

  constructor(
    private readonly builder: ReplyBuilder,
    /** The request's max_tokens, for the message when a reply is cut in a tool call. */
    private readonly maxTokens: number,
  ) {}

  /** Adds one stream event (the `count`th, for messages); throws ModelError `malformed` for one of the wrong shape. */
  event(raw: unknown, count: number): void {
    const what = `event ${count} of the reply stream`;
    const { type } = parseShape(EventType, raw, what, "a Messages API event");
    if (type === "message_start") this.#addUsage(parseShape(EVENTS.message_start, raw, what, "a Messages API event").message.usage);
    else if (type === "content_block_start") {
      const { index, content_block } = parseShape(EVENTS.content_block_start, raw, what, "a Messages API event");
      this.#startBlock(index, content_block);
    } else if (type === "content_block_delta") {
      const { index, delta } = parseShape(EVENTS.content_block_delta, raw, what, "a Messages API event");
      this.#addDelta(index, delta);
    } else if (type === "message_delta") {
      const { delta, usage } = parseShape(EVENTS.message_delta, raw, what, "a Messages API event");
      if (delta.stop_reason) this.#stop = delta.stop_reason;
      this.#addUsage(usage);
    }
  }

  /** Adds a whole (non-streamed) message; throws ModelError `malformed` for the wrong shape. */
  message(raw: unknown): void {
    const message = parseShape(WholeMessage, raw, "the reply", "a Messages API message");
    message.content.forEach((block, index) => {
      this.#startBlock(index, block);
      if (block.type === "text" && block.text) this.builder.text(block.text);
    });
    if (message.stop_reason) this.#stop = message.stop_reason;
    this.#addUsage(message.usage);
  }

  /** Hands the builder what only the end tells: inputs that came whole, the stop reason, the usage. Throws ModelError `malformed` for a reply cut in a tool call. */
  finish(): void {
    for (const [index, block] of this.#toolBlocks) {
      if (!block.streamed && isNonEmptyObject(block.input)) this.builder.toolCall(index, { arguments: inputText(block.input, index) });
    }
    if (this.#stop === "max_tokens" && this.#toolBlocks.size > 0) {
      throw new ModelError("malformed", `the model's reply reached max_tokens (${this.maxTokens}, model.max_tokens) in the middle of a tool call, so the call is incomplete: raise model.max_tokens`);
    }
    if (this.#stop !== undefined) this.builder.finish(STOP_REASONS[this.#stop] ?? this.#stop);
    const usage = usageOf(this.#usage);
    if (usage) this.builder.usage(usage);
  }

  #startBlock(index: number, block: z.infer<typeof Block>): void {
    if (block.type !== "tool_use") return;
    this.#toolBlocks.set(index, { input: block.input, streamed: false });
    this.builder.toolCall(index, { id: block.id, name: block.name });
  }

  #addDelta(index: number, delta: z.infer<typeof Delta>): void {
    if (delta.type === "text_delta" && delta.text !== undefined) this.builder.text(delta.text);
    if (delta.type !== "input_json_delta" || delta.partial_json === undefined) return;
    const block = this.#toolBlocks.get(index);
    if (block === undefined) throw new ModelError("malformed", `the model's reply sent tool input for content block ${index}, which is not a tool call`);
    block.streamed = true;
    this.builder.toolCall(index, { arguments: delta.partial_json });
  }

  /** The API reports usage at the start and again (counts so far) at the end: a later count replaces an earlier one. */
  #addUsage(raw: unknown): void {
    const usage = UsageShape.safeParse(raw);
    if (!usage.success) return;
    for (const [field, value] of Object.entries(usage.data) as [keyof RawUsage, number | null | undefined][]) {
      if (typeof value === "number") this.#usage = { ...this.#usage, [field]: value };
    }
  }
}

/** The usage in ModelUsage's terms: the prompt is the uncached input plus cache reads and writes. Usage is a hint: none without input and output counts. */
function usageOf(raw: RawUsage): ModelUsage | undefined {
  if (typeof raw.input_tokens !== "number" || typeof raw.output_tokens !== "number") return undefined;
  const cacheReadTokens = raw.cache_read_input_tokens ?? 0;
  const cacheWriteTokens = raw.cache_creation_input_tokens ?? 0;
  return { promptTokens: raw.input_tokens + cacheReadTokens + cacheWriteTokens, completionTokens: raw.output_tokens, cacheReadTokens, cacheWriteTokens };
}

/** A whole tool input as JSON text; throws ModelError `malformed` past MAX_TOOL_ARGUMENT_DEPTH, before JSON.stringify could overflow on it. */
function inputText(input: Record<string, unknown>, index: number): string {
  const depth = jsonNestingDepth(input, MAX_TOOL_ARGUMENT_DEPTH);
  if (depth > MAX_TOOL_ARGUMENT_DEPTH) {
    throw new ModelError("malformed", `the model's tool call at index ${index} has input nesting deeper than MAX_TOOL_ARGUMENT_DEPTH (${MAX_TOOL_ARGUMENT_DEPTH} levels)`);
  }
  return JSON.stringify(input);
}

function isNonEmptyObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length > 0;
}
