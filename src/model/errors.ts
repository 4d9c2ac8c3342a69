import { visibleControls } from "../text/index.js";
import { MAX_SERVER_MESSAGE_CHARS } from "./limits.js";

/**
 * - `config`: settings or the environment cannot make an adapter (raised before any request);
 * - `unreachable`: no connection, or the connection broke off;
 * - `http`: the server answered with an error (`status` when it came as an HTTP status);
 * - `timeout`: a named deadline passed;
 * - `interrupted`: the request's signal was aborted;
 * - `malformed`: a reply the adapter cannot use (bad JSON, wrong shape, over a bound, cut short);
 * - `script_exhausted`: the stub's script has no reply left.
 */
export type ModelErrorKind = "config" | "unreachable" | "http" | "timeout" | "interrupted" | "malformed" | "script_exhausted";

/**
 * A model call or adapter set-up that failed. Local (no wire code): the turn runner turns it into a
 * `failed` outcome with this message. The message is one sentence for a person and never holds
 * the API key; nothing from the SDK is attached as `cause`, since SDK errors carry headers.
 */
export class ModelError extends Error {
  override readonly name = "ModelError";
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    /** The HTTP status, for `http` errors that came as one. */
    readonly status?: number,
    /** The server's own words about an `http` error (quoted, bounded), so a caller can tell what it refused. */
    readonly serverText?: string,
  ) {
    super(message);
  }
}

/** True when `error` is a ModelError, of `kind` if given. */
export function isModelError(error: unknown, kind?: ModelErrorKind): error is ModelError {
  return error instanceof ModelError && (kind === undefined || error.kind === kind);
}

/** The error of a call whose signal was aborted (the one wording every adapter uses). */
export function interruptedError(): ModelError {
  return new ModelError("interrupted", "the model call was interrupted");
}

/**
 * Text a server sent, made fit to quote: the secret replaced (a server may echo the
 * Authorization header back), controls made visible, cut to MAX_SERVER_MESSAGE_CHARS.
 */
export function quoteServerText(text: string, secret: string | undefined): string {
  const visible = visibleControls(withoutSecret(text, secret).trim());
  // Well-formed after the cut too, which can split a surrogate pair: the text may end up in a receipt.
  return (visible.length > MAX_SERVER_MESSAGE_CHARS ? `${visible.slice(0, MAX_SERVER_MESSAGE_CHARS)}…` : visible).toWellFormed();
}

/** `text` with every occurrence of `secret` replaced by `[redacted]`. */
export function withoutSecret(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}
