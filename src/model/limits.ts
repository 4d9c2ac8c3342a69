/** Deadlines and bounds of the model adapters (O-7) and of the `model` settings section. */

/** Retries the SDK (openai, Anthropic) makes itself after a connection error, a timeout, 408, 409, 429 or 5xx (Anthropic's 529 `overloaded_error` among them). */
export const MODEL_MAX_RETRIES = 2;
/**
 * How long one attempt may wait for the response headers (the SDK's own timeout). Replies are
 * streamed, so headers come as soon as the server starts answering, long before the reply ends.
 */
export const MODEL_REQUEST_TIMEOUT_MS = 120_000;
/** Longest silence (no bytes) between the response headers and the end of the reply. */
export const MODEL_STREAM_IDLE_TIMEOUT_MS = 120_000;
/**
 * Longest one `complete` call may take in all: retries, the waits a `retry-after` header asks
 * for (up to MODEL_MAX_RETRY_WAIT_MS each), and the stream. Generous, since a local model on a CPU is slow.
 */
export const MODEL_REPLY_TIMEOUT_MS = 30 * 60_000;
/**
 * Longest wait before a retry that albedo lets a server ask for (`retry-after`, `retry-after-ms`).
 * A server asking for more (a rate limit of a day) ends the call at once with an error saying
 * so, rather than holding the turn, and the daemon's shutdown, for the wait.
 */
export const MODEL_MAX_RETRY_WAIT_MS = 60_000;
/** UTF-8 bytes of one reply's prose plus all its tool-call arguments; past it the reply fails as `malformed`. */
export const MAX_MODEL_REPLY_BYTES = 1024 * 1024;
/**
 * Bytes of one HTTP response body as it arrives. Streaming spends ~100 bytes of JSON per token, so
 * this is far above MAX_MODEL_REPLY_BYTES; it also caps a plain JSON reply, read whole.
 */
export const MAX_MODEL_RESPONSE_BYTES = 64 * 1024 * 1024;
/**
 * Bytes of one server-sent event (and so of any one line of it) in a streamed reply. A whole reply
 * of MAX_MODEL_REPLY_BYTES in one event, JSON-escaped, fits; one event past it fails the call
 * rather than being buffered whole.
 */
export const MAX_MODEL_SSE_EVENT_BYTES = 8 * 1024 * 1024;
/**
 * Levels of arrays and objects in one tool call's arguments. Deeper arguments are refused where
 * they come in (the runner answers the model with an error) and sent back as text where a wire
 * wants them as an object (Anthropic's `tool_use.input`): serialising them whole would overflow the
 * call stack on every later request of the conversation.
 */
export const MAX_TOOL_ARGUMENT_DEPTH = 64;
/** Tool calls in one reply (and the largest tool-call index + 1 a stream may use). */
export const MAX_MODEL_TOOL_CALLS = 128;
/** Bytes of an error response's body read for its message; the rest is never read. */
export const MAX_ERROR_BODY_BYTES = 16 * 1024;
/** Characters of a server's own error text quoted in a ModelError message. */
export const MAX_SERVER_MESSAGE_CHARS = 500;

/** Context budget (O-8) when `model.context_tokens` is unset. */
export const DEFAULT_CONTEXT_TOKENS = 32_768;
/** `model.max_tokens` when unset: the most tokens one reply may have (the Anthropic Messages API requires a cap on every request). */
export const DEFAULT_MAX_TOKENS = 8_192;
/** Largest `model.max_tokens`. */
export const MAX_MAX_TOKENS = 1_048_576;
/** Smallest `model.context_tokens`: below it message[0] alone would not fit. */
export const MIN_CONTEXT_TOKENS = 1_024;
/** Largest `model.context_tokens`. */
export const MAX_CONTEXT_TOKENS = 16 * 1024 * 1024;
/** Characters of `model.name`. */
export const MAX_MODEL_NAME_LENGTH = 256;
/** Characters of `model.base_url`. */
export const MAX_BASE_URL_LENGTH = 2_048;
/** Characters of `model.api_key_env`. */
export const MAX_ENV_NAME_LENGTH = 128;
/** Characters of `model.script`. */
export const MAX_SCRIPT_PATH_LENGTH = 4_096;

/** Bytes of a stub script file; a larger one is refused, not cut. */
export const MAX_STUB_SCRIPT_BYTES = 1024 * 1024;
/** Replies in one stub script. */
export const MAX_STUB_REPLIES = 1_024;
/** Largest `delay_ms` between two streamed words of a stub reply. */
export const MAX_STUB_DELAY_MS = 10_000;
