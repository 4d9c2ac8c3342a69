import type { FinishReason, ModelReply, ModelUsage, ToolCall } from "./adapter.js";
import { ModelError } from "./errors.js";
import { MAX_MODEL_TOOL_CALLS } from "./limits.js";

/** A part of one tool call as a stream delivers it: any field may be missing from any part. */
export interface ToolCallPart {
  readonly id?: string | null;
  readonly name?: string | null;
  readonly arguments?: string | null;
}

/** What `onText` threw, carried through the SDK's stream unchanged so the caller gets its own error back. */
export class CallbackError extends Error {
  override readonly name = "CallbackError";
  constructor(readonly original: unknown) {
    super("onText threw");
  }
}

interface PendingCall {
  id?: string;
  name?: string;
  readonly argumentParts: string[];
}

const KNOWN_REASONS: readonly string[] = ["stop", "tool_calls", "length", "content_filter"];

/**
 * Builds one reply from the parts a server sends (streamed deltas or a whole message), holding
 * at most `maxBytes` UTF-8 bytes of prose and arguments: the part that would pass the bound
 * throws ModelError `malformed` instead of being kept. A lone surrogate the server sent (a
 * `"\ud800"` escape) becomes U+FFFD, so the reply is text every strict JSON parser takes; a pair
 * split across two deltas is joined first.
 */
export class ReplyBuilder {
  readonly #textParts: string[] = [];
  readonly #calls = new Map<number, PendingCall>();
  #bytes = 0;
  /** A high surrogate that ended the last delta: the next one may begin with its other half. */
  #heldHalf = "";
  #finish: string | undefined;
  #usage: ModelUsage | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly onText?: (delta: string) => void,
  ) {}

  /** Adds prose and hands it to `onText` at once (but a high surrogate ending it, until the next delta). */
  text(delta: string): void {
    if (delta.length === 0) return;
    const joined = this.#heldHalf + delta;
    const last = joined.charCodeAt(joined.length - 1);
    this.#heldHalf = last >= 0xd800 && last <= 0xdbff ? joined.slice(-1) : "";
    this.#keepText(joined.slice(0, joined.length - this.#heldHalf.length).toWellFormed());
  }

  #keepText(text: string): void {
    if (text.length === 0) return;
    this.#count(text);
    this.#textParts.push(text);
    try {
      this.onText?.(text);
    } catch (error) {
      throw new CallbackError(error);
    }
  }

  /** Adds a part of the tool call at `index`: the first id and name win, argument pieces are joined in order. */
  toolCall(index: number, part: ToolCallPart): void {
    if (!Number.isInteger(index) || index < 0 || index >= MAX_MODEL_TOOL_CALLS) {
      throw new ModelError("malformed", `the model's reply has a tool call at index ${index}; at most ${MAX_MODEL_TOOL_CALLS} calls (MAX_MODEL_TOOL_CALLS) are accepted`);
    }
    let call = this.#calls.get(index);
    if (!call) {
      call = { argumentParts: [] };
      this.#calls.set(index, call);
    }
    if (part.id && call.id === undefined) call.id = part.id.toWellFormed();
    if (part.name && call.name === undefined) call.name = part.name.toWellFormed();
    if (part.arguments) {
      this.#count(part.arguments);
      call.argumentParts.push(part.arguments);
    }
  }

  finish(reason: string): void {
    this.#finish = reason;
  }

  usage(usage: ModelUsage): void {
    this.#usage = usage;
  }

  /** The reply; throws ModelError `malformed` when the server never said why it stopped or named no function. */
  build(): ModelReply {
    if (this.#finish === undefined) {
      throw new ModelError("malformed", "the model's reply ended without a finish reason, so it may be cut short");
    }
    // No delta came to pair it: a lone surrogate after all.
    this.#keepText(this.#heldHalf.toWellFormed());
    this.#heldHalf = "";
    const toolCalls = [...this.#calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => finishedCall(index, call));
    const reply = { text: this.#textParts.join(""), toolCalls, finishReason: normalizeReason(this.#finish, toolCalls.length > 0) };
    return this.#usage ? { ...reply, usage: this.#usage } : reply;
  }

  #count(piece: string): void {
    this.#bytes += Buffer.byteLength(piece, "utf8");
    if (this.#bytes > this.maxBytes) {
      throw new ModelError("malformed", `the model's reply is over ${this.maxBytes} bytes of prose and tool-call arguments (MAX_MODEL_REPLY_BYTES), so it was cut off`);
    }
  }
}

function finishedCall(index: number, call: PendingCall): ToolCall {
  if (!call.name) throw new ModelError("malformed", `the model's tool call at index ${index} names no function`);
  // Some servers (older llama.cpp) send no ids; the index is unique within the reply.
  return { id: call.id ?? `call_${index}`, name: call.name, arguments: call.argumentParts.join("").toWellFormed() };
}

function normalizeReason(reason: string, hasCalls: boolean): FinishReason {
  if (hasCalls && reason === "stop") return "tool_calls";
  return KNOWN_REASONS.includes(reason) ? (reason as FinishReason) : "other";
}
