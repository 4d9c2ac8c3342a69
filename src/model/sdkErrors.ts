/**
 * What a failed model call rejects with, for the adapters built on the official SDKs (openai,
 * Anthropic): both come from one generator and throw errors of the same shapes under their own
 * classes, which each adapter hands in.
 */
import { interruptedError, ModelError, quoteServerText } from "./errors.js";
import { CallbackError } from "./replyBuilder.js";
import { waitText } from "./retryWait.js";
import { SseEventTooLargeError } from "./sseEvents.js";
import { ResponseTooLargeError } from "./transport.js";

/** What a failed call's message may name; `key` only so that it can be kept out. */
export interface FailureContext {
  readonly server: string;
  readonly key: string | undefined;
  readonly requestTimeoutMs: number;
  readonly attempts: number;
  readonly errorBody: string | undefined;
  /** A wait before a retry the server asked for and albedo refused, past `maxRetryWaitMs`. */
  readonly refusedWaitMs: number | undefined;
  readonly maxRetryWaitMs: number;
}

/** The shape every SDK's HTTP error has: the status (undefined for an error event inside a stream) and the parsed body. */
interface SdkApiError extends Error {
  readonly status: number | undefined;
  readonly error: unknown;
}

type ErrorClass<T extends Error> = abstract new (...args: never[]) => T;

/** One SDK's error classes; the connection-timeout class must be checked before the connection class it extends. */
export interface SdkErrorClasses {
  readonly userAbort: ErrorClass<Error>;
  readonly connectionTimeout: ErrorClass<Error>;
  readonly connection: ErrorClass<Error>;
  readonly api: ErrorClass<SdkApiError>;
}

/** Plain words for the connection errors people meet; any other code is shown as it is. */
const CONNECTION_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ECONNRESET: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
};

/**
 * The error a failed call rejects with: a ModelError for everything the SDK, the transport or the
 * reply reader threw, and `onText`'s own error unchanged. Nothing of the original is attached.
 */
export function toModelError(error: unknown, context: FailureContext, classes: SdkErrorClasses): unknown {
  if (error instanceof ModelError) return error;
  if (error instanceof CallbackError) return error.original;
  const { server } = context;
  if (error instanceof ResponseTooLargeError) {
    return new ModelError("malformed", `the model server at ${server} sent a response over ${error.maxBytes} bytes (MAX_MODEL_RESPONSE_BYTES), so it was cut off`);
  }
  if (error instanceof SseEventTooLargeError) {
    return new ModelError("malformed", `the model server at ${server} sent one server-sent event (or line) over ${error.maxBytes} bytes (MAX_MODEL_SSE_EVENT_BYTES), so it was cut off`);
  }
  if (error instanceof classes.userAbort) return interruptedError();
  if (error instanceof classes.connectionTimeout) {
    return new ModelError("timeout", `the model server at ${server} did not start answering within MODEL_REQUEST_TIMEOUT_MS (${context.requestTimeoutMs} ms), ${attempts(context)}`);
  }
  if (error instanceof classes.connection) {
    return new ModelError("unreachable", `cannot reach the model server at ${server} (${quoteServerText(connectionProblem(error), context.key)}), ${attempts(context)}`);
  }
  if (error instanceof classes.api) return httpError(error, context);
  if (isBrokenStream(error)) return new ModelError("unreachable", `the connection to the model server at ${server} broke off in the middle of the reply`);
  if (error instanceof SyntaxError) return new ModelError("malformed", `the model server at ${server} sent a part of its reply that is not valid JSON`);
  const text = error instanceof Error ? error.message : String(error);
  return new ModelError("malformed", `the model call failed unexpectedly: ${quoteServerText(text, context.key)}`);
}

function httpError(error: SdkApiError, context: FailureContext): ModelError {
  const said = serverMessage(error, context);
  if (error.status === undefined) {
    return new ModelError("http", `the model server at ${context.server} reported an error in the middle of its reply${said ? `: ${said}` : ""}`);
  }
  const redirect = error.status >= 300 && error.status < 400 ? " (a redirect, which albedo does not follow, so that the key goes to base_url only)" : "";
  const retried = context.attempts > 1 ? `, ${attempts(context)}` : "";
  const refused = context.refusedWaitMs === undefined ? ""
    : `; it asked to wait ${waitText(context.refusedWaitMs)} before trying again, longer than MODEL_MAX_RETRY_WAIT_MS (${waitText(context.maxRetryWaitMs)}), so albedo did not wait: try again later`;
  return new ModelError("http", `the model server at ${context.server} answered HTTP ${error.status}${redirect}${said ? `: ${said}` : ""}${retried}${refused}`, error.status, said || undefined);
}

/** The server's own words: the body we kept (any shape: OpenAI's, vLLM's `message`, FastAPI's `detail`), else the SDK's reading of it. */
function serverMessage(error: SdkApiError, context: FailureContext): string {
  const fromBody = context.errorBody === undefined ? undefined : messageIn(context.errorBody);
  const fromError = messageOf(error.error);
  return quoteServerText(error.status === undefined ? (fromError ?? error.message) : (fromBody ?? ""), context.key);
}

function messageIn(body: string): string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return body;
  }
  return messageOf(value) ?? body;
}

/** The message in an error body: OpenAI's and Anthropic's `error.message`, a bare `error`, vLLM's `message`, FastAPI's `detail`. */
function messageOf(value: unknown): string | undefined {
  for (const candidate of [pick(pick(value, "error"), "message"), pick(value, "error"), pick(value, "message"), pick(value, "detail")]) {
    if (typeof candidate === "string") return candidate;
  }
  return undefined;
}

function pick(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function attempts(context: FailureContext): string {
  return context.attempts === 1 ? "after 1 attempt" : `after ${context.attempts} attempts (MODEL_MAX_RETRIES)`;
}

/** The innermost error code or message under a connection error (fetch nests them). */
function connectionProblem(error: Error): string {
  let cause: unknown = error.cause;
  let last = "no further detail";
  for (let depth = 0; cause instanceof Error && depth < 8; depth += 1) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === "string") return CONNECTION_CODES[code] ?? code;
    last = cause.message;
    cause = cause.cause;
  }
  return last;
}

/** undici's error when a body's connection closes before the body ends. */
function isBrokenStream(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return error.message === "terminated" || (typeof code === "string" && code.startsWith("UND_ERR"));
}
