/**
 * The fetch every REST call to a remote server goes through (K-12, B). The server is not trusted:
 * its answer is read whole only up to MAX_REMOTE_BODY_BYTES and within REMOTE_REQUEST_TIMEOUT_MS,
 * and past either the response is aborted, so the rest is never read. services then gets the answer
 * rebuilt from those bytes: an error answer as a short message with the token redacted and no
 * traceback (services prints a server's traceback to the console), a success answer as it came.
 */
import { humanSize } from "../../json/index.js";
import { RemoteKernelError } from "./errors.js";
import { MAX_REMOTE_BODY_BYTES, REMOTE_REQUEST_TIMEOUT_MS } from "./limits.js";
import { quoteRemote } from "./quote.js";

/** How much of one answer is read, and for how long. */
export interface RestBounds {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

export const REST_BOUNDS: RestBounds = { maxBytes: MAX_REMOTE_BODY_BYTES, timeoutMs: REMOTE_REQUEST_TIMEOUT_MS };
/** Statuses whose answer has no body (a Response with one cannot be built). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);
/** Headers that describe the bytes as they came, not as services gets them. */
const DROPPED_HEADERS = ["content-length", "content-encoding", "transfer-encoding"];

type Fetch = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch bounded by `bounds`, redacting `secrets` from what an error answer says. It rejects when
 * no answer came in time (services reports that as a network error); an answer that passes a bound
 * is a success whose body rejects with RemoteKernelError naming the bound, or an error answer saying so.
 */
export function boundedFetch(secrets: readonly string[], bounds: RestBounds = REST_BOUNDS): Fetch {
  return async (input, init) => {
    const what = describe(input, init, secrets);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new RemoteKernelError("unreachable", `${what}: no complete answer within REMOTE_REQUEST_TIMEOUT_MS (${bounds.timeoutMs} ms)`)), bounds.timeoutMs);
    try {
      const response = await fetch(input, { ...init, redirect: "error", signal: controller.signal });
      const body = await readBounded(response, bounds.maxBytes, controller, what).catch((error: unknown) => asError(error));
      return rebuilt(response, body, secrets, what);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The whole body, or a throw once it passes `maxBytes` or the deadline aborts it. Either way the
 * request is aborted and the body cancelled: the abort alone now and then leaves undici holding the
 * socket, paused, with the server blocked writing to it; the cancel closes the connection.
 */
async function readBounded(response: Response, maxBytes: number, controller: AbortController, what: string): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array();
  const reader = response.body.getReader();
  const tooLarge = () => {
    const error = new RemoteKernelError("server", `${what}: the answer is larger than MAX_REMOTE_BODY_BYTES (${humanSize(maxBytes)}); albedo stopped reading it`);
    controller.abort(error);
    return error;
  };
  try {
    if (Number(response.headers.get("content-length") ?? 0) > maxBytes) throw tooLarge();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return Buffer.concat(chunks, size);
      size += value.byteLength;
      if (size > maxBytes) throw tooLarge();
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel(error).catch(() => undefined);
    throw error;
  }
}

/** The answer services reads: `body` as it came, or in place of a failed read a body that fails (success) or says why (error answer). */
function rebuilt(response: Response, body: Uint8Array | Error, secrets: readonly string[], what: string): Response {
  const headers = new Headers(response.headers);
  for (const name of DROPPED_HEADERS) headers.delete(name);
  const init = { status: response.status, statusText: quoteRemote(response.statusText, secrets), headers };
  const content = NULL_BODY_STATUSES.has(response.status) ? null
    : response.ok ? (body instanceof Error ? failing(body) : body)
    : JSON.stringify(errorBody(body, secrets));
  try {
    return new Response(content, init);
  } catch {
    throw new RemoteKernelError("server", `${what}: the server answered HTTP ${response.status}, which is not an answer albedo can read`);
  }
}

/** What services makes its error from: the server's message, quoted; never its traceback. */
function errorBody(body: Uint8Array | Error, secrets: readonly string[]): { message?: string } {
  if (body instanceof Error) return { message: body.message };
  try {
    const parsed = JSON.parse(Buffer.from(body).toString("utf8")) as unknown;
    const message = (parsed as { message?: unknown } | null)?.message;
    return typeof message === "string" ? { message: quoteRemote(message, secrets) } : {};
  } catch {
    return {};
  }
}

function failing(error: Error): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (stream) => stream.error(error) });
}

/** `POST http://host:port/api/kernels`: the request, without the query services adds to defeat caches. */
function describe(input: Request | string | URL, init: RequestInit | undefined, secrets: readonly string[]): string {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = init?.method ?? (input instanceof Request ? input.method : "GET");
  return quoteRemote(`${method} ${url.origin}${url.pathname}`, secrets);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
