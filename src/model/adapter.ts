/**
 * The one interface every model adapter implements (O-7). Shaped like OpenAI chat completions,
 * the shape every compatible server (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter) speaks, so
 * an adapter translates as little as possible. Messages keep the wire's snake_case because they
 * are stored and sent as they are; the reply is an in-process value.
 */

/** How a model works a session: by writing Python (`code`), or also by calling `skill` and `read` (`tool`, O-5). */
export type ModelMode = "code" | "tool";
export const MODEL_MODES: readonly ModelMode[] = ["code", "tool"];

/** One function call the model asked for. */
export interface ToolCall {
  /** The id a tool result answers with `tool_call_id`. */
  readonly id: string;
  readonly name: string;
  /** The arguments as the JSON text the model sent, unparsed: it may be malformed, and the runner answers that with an error result. */
  readonly arguments: string;
}

/**
 * An image a user message carries (I-2): a checked image's bytes as base64. Adapters send it as
 * their wire's image part (chat completions: an `image_url` data URL after the text).
 */
export interface MessageImage {
  readonly mime: string;
  /** The bytes, base64. */
  readonly data: string;
  readonly width: number;
  readonly height: number;
}

/**
 * How the user message carrying a step's images (I-2) begins each of its lines: this prefix, the
 * call's id, ": ", then one label per image (`[image N · …]`). An adapter whose tool results can
 * hold images (Anthropic) reads it to put each image back into its call's result.
 */
export const IMAGES_OF_CALL_PREFIX = "Images of the python call ";

/** How a tool result that reports a failure begins; an adapter whose wire has an error flag (Anthropic's `is_error`) sets it for these. */
export const TOOL_ERROR_PREFIX = "Error: ";

export type ChatMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: string; readonly images?: readonly MessageImage[] }
  | { readonly role: "assistant"; readonly content: string; readonly tool_calls?: readonly ToolCall[] }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string };

/** A tool offered to the model. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** A JSON Schema object describing the arguments. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface ModelRequest {
  readonly messages: readonly ChatMessage[];
  /** Empty: no tools are offered (the request then carries no `tools` field at all). */
  readonly tools: readonly ToolSpec[];
  /** Aborting it ends the call at once with ModelError `interrupted` and closes the HTTP request. */
  readonly signal: AbortSignal;
  /** Called with each piece of prose as it arrives, in order; the pieces join to the reply's `text`. */
  readonly onText?: (delta: string) => void;
  /** Told, in a sentence for people, of a wait the call makes on the server's request (a rate limit's `retry-after`). */
  readonly onNotice?: (text: string) => void;
}

/**
 * Why the model stopped. `tool_calls` whenever the reply has tool calls (some servers say `stop`
 * there); `length` means the reply was cut by the server's token limit; `other` is anything else.
 * The runner decides by `toolCalls`, not by this.
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "other";

/** Token counts the endpoint reported (O-8 uses them instead of estimating). */
export interface ModelUsage {
  /** Every token of the prompt, read from a cache or not (Anthropic's input tokens plus its cache reads and writes). */
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Of `promptTokens`, those read from the endpoint's prompt cache; absent when it did not say. */
  readonly cacheReadTokens?: number;
  /** Of `promptTokens`, those written to the endpoint's prompt cache; absent when it did not say. */
  readonly cacheWriteTokens?: number;
}

export interface ModelReply {
  /** The prose; empty when the model only called tools. */
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  readonly usage?: ModelUsage;
}

/** What `/model` shows. Never the key, nor the name of its variable. */
export interface ModelDescription {
  readonly provider: string;
  readonly baseUrl?: string;
  readonly model: string;
  readonly mode: ModelMode;
  readonly contextTokens: number;
}

export interface ModelAdapter {
  /** One model call. Resolves with the whole reply; rejects with a ModelError only (or with what `onText` threw). */
  complete(request: ModelRequest): Promise<ModelReply>;
  describe(): ModelDescription;
}

/** Where the openai SDK's own log lines go (shape of its `Logger`). */
export interface ModelLogger {
  error(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  debug(message: string, ...rest: unknown[]): void;
}

/** Overrides of the named deadlines and bounds (tests, embedders); each defaults to its constant in limits.ts. */
export interface AdapterOptions {
  readonly requestTimeoutMs?: number;
  readonly streamIdleTimeoutMs?: number;
  readonly replyTimeoutMs?: number;
  readonly maxRetries?: number;
  readonly maxReplyBytes?: number;
  readonly maxResponseBytes?: number;
  readonly maxSseEventBytes?: number;
  readonly maxRetryWaitMs?: number;
  /** The SDK logs nothing unless given a logger and level here (never to the console by default). */
  readonly log?: { readonly logger: ModelLogger; readonly level: "debug" | "info" | "warn" | "error" };
}

/** The environment an adapter reads its key from (process.env or a test's copy). */
export type ModelEnv = Readonly<Record<string, string | undefined>>;
