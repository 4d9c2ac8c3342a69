/**
 * Compaction (O-8): when a request would pass the model's budget, older turns are replaced by one
 * summary the model writes (or an elision note when it cannot), and a notice row says so. message[0]
 * is never touched, and every skill loaded in the conversation stays verbatim, so a compacted
 * conversation never needs a skill again.
 */
import { imagesText, isModelError, type ChatMessage, type ModelAdapter } from "../model/index.js";
import type { ConversationMessage, ConversationState, TurnMessages } from "./conversation.js";
import { CHARS_PER_TOKEN, COMPACTION_THRESHOLD, IMAGE_ESTIMATE_CHARS, KEPT_RECENT_TURNS, MAX_SUMMARY_SOURCE_CHARS } from "./limits.js";

/** What the model is asked when it summarises. */
const SUMMARY_REQUEST =
  "Summarise the conversation below for your own later use: the requests, what was done and found, decisions, " +
  "open questions, and file names or values needed to go on. Plain prose, at most a few hundred words.";

/** How characters turn into tokens: CHARS_PER_TOKEN until the endpoint reports usage, then what it reported. */
export class TokenEstimate {
  private charsPerToken = CHARS_PER_TOKEN;

  /** Learns from a request of `chars` characters the endpoint counted as `promptTokens`. */
  calibrate(chars: number, promptTokens: number | undefined): void {
    if (promptTokens !== undefined && promptTokens > 0 && chars > 0) this.charsPerToken = chars / promptTokens;
  }

  tokens(messages: readonly ChatMessage<unknown>[]): number {
    return Math.ceil(messageChars(messages) / this.charsPerToken);
  }
}

/** Characters a request of `messages` carries (content, the text beside a result's images, and tool-call arguments). */
export function messageChars(messages: readonly ChatMessage<unknown>[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += message.content.length;
    if (message.role === "user") chars += (message.images?.length ?? 0) * IMAGE_ESTIMATE_CHARS;
    if (message.role === "tool" && message.images !== undefined) chars += imagesText(message.tool_call_id, message.images).length + message.images.sent.length * IMAGE_ESTIMATE_CHARS;
    if (message.role === "assistant") for (const call of message.tool_calls ?? []) chars += call.name.length + call.arguments.length;
  }
  return chars;
}

export interface CompactionRequest {
  readonly system: ChatMessage;
  readonly state: ConversationState;
  /** The running turn's messages so far; never compacted. */
  readonly current: readonly ConversationMessage[];
  readonly contextTokens: number;
  readonly estimate: TokenEstimate;
  readonly adapter: ModelAdapter;
  readonly signal: AbortSignal;
}

/** The conversation's turns, compacted when the request would fill more than COMPACTION_THRESHOLD of the budget; `notice` says what happened. */
export async function compactIfNeeded(request: CompactionRequest): Promise<{ turns: readonly TurnMessages[]; notice?: string }> {
  const { state } = request;
  const all = [request.system, ...state.turns.flatMap((turn) => turn.messages), ...request.current];
  if (request.estimate.tokens(all) <= request.contextTokens * COMPACTION_THRESHOLD) return { turns: state.turns };
  const older = state.turns.slice(0, Math.max(0, state.turns.length - KEPT_RECENT_TURNS));
  if (older.length === 0 || (older.length === 1 && older[0]!.summary === true)) return { turns: state.turns };
  const recent = state.turns.slice(older.length);
  const summary = await summarise(older, request);
  const kept = keptSkills(state, recent);
  const text = [
    `[albedo: ${older.length} earlier turns, ${summary.ok ? "summarised" : "left out"} to fit the model's context]`,
    summary.text,
    ...(kept.length > 0 ? ["Skills loaded earlier in this conversation, still in force:", ...kept] : []),
  ].join("\n\n");
  const notice = summary.ok
    ? `${older.length} earlier turns were summarised to fit the model's context of ${request.contextTokens} tokens; loaded skills were kept.`
    : `${older.length} earlier turns were left out to fit the model's context (no summary: ${summary.text}); loaded skills were kept.`;
  return { turns: [{ turn_id: "summary", summary: true, messages: [{ role: "user", content: text }] }, ...recent], notice };
}

/** The loaded skills' text that the kept turns no longer carry. */
function keptSkills(state: ConversationState, recent: readonly TurnMessages[]): string[] {
  const recentText = recent.flatMap((turn) => turn.messages.map((message) => message.content)).join("\n");
  return state.loaded.filter((skill) => skill.body !== "" && !recentText.includes(skill.body)).map((skill) => skill.body);
}

/** The model's summary of `turns`; on failure (other than an interrupt) an elision note with the reason. */
async function summarise(turns: readonly TurnMessages[], request: CompactionRequest): Promise<{ ok: boolean; text: string }> {
  const source = turns.flatMap((turn) => turn.messages.map(render)).join("\n\n");
  const bounded = source.length > MAX_SUMMARY_SOURCE_CHARS ? `[…]\n${source.slice(source.length - MAX_SUMMARY_SOURCE_CHARS)}` : source;
  try {
    const reply = await request.adapter.complete({
      messages: [{ role: "system", content: SUMMARY_REQUEST }, { role: "user", content: bounded }],
      tools: [],
      signal: request.signal,
    });
    return reply.text.trim() === "" ? { ok: false, text: "the model answered with no text" } : { ok: true, text: reply.text.trim() };
  } catch (error) {
    if (isModelError(error, "interrupted")) throw error;
    return { ok: false, text: error instanceof Error ? error.message : String(error) };
  }
}

function render(message: ConversationMessage): string {
  if (message.role === "assistant" && message.tool_calls?.length) {
    return `assistant: ${message.content}\n${message.tool_calls.map((call) => `[called ${call.name} with ${call.arguments}]`).join("\n")}`;
  }
  if (message.role === "tool" && message.images !== undefined) return `tool: ${message.content}\n${imagesText(message.tool_call_id, message.images)}`;
  return `${message.role}: ${message.content}`;
}
