import { AsyncLocalStorage } from "node:async_hooks";
import { MAX_ERROR_BODY_BYTES } from "./limits.js";
import { setTimeout as sleep } from "node:timers/promises";
import { askedWaitMs, sdkRetries, waited, withoutRetry } from "./retryWait.js";
import { sseEvents } from "./sseEvents.js";

/** The fetch both SDKs take. */
type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A response body that passed its byte bound; the stream reading it fails with this. */
export class ResponseTooLargeError extends Error {
  override readonly name = "ResponseTooLargeError";
  constructor(readonly maxBytes: number) {
    super(`response body over ${maxBytes} bytes`);
  }
}

/** The fetch one model call gives the SDK, and what it saw. */
export interface CallTransport {
  readonly fetch: Fetch;
  /** The start of the last error response's body (at most MAX_ERROR_BODY_BYTES), for the error message. */
  lastErrorBody(): string | undefined;
  /** Requests sent so far: 1 + the SDK's retries. */
  attempts(): number;
  /** The wait, in ms, a server asked for before a retry that was refused for passing `maxRetryWaitMs`; undefined when none was. */
  refusedWaitMs(): number | undefined;
}

/** The bounds of one call's transport, and whom it tells of progress and of waits. */
export interface TransportSetup {
  readonly maxBytes: number;
  readonly maxEventBytes: number;
  /** Retries the SDK makes after the first attempt. */
  readonly maxRetries: number;
  readonly maxRetryWaitMs: number;
  /** Hears of a response's headers and of every piece of a body (the idle deadline). */
  onProgress(): void;
  /** Hears of a wait up to `maxRetryWaitMs` a server asked for before the SDK's next attempt. */
  onRetryWait(waitMs: number, status: number): void;
  /** The call's signal: a wait for a retry ends when it aborts. */
  readonly signal: AbortSignal;
}

/**
 * Wraps the global fetch for one call: redirects are never followed (the request, with the
 * conversation and the key, goes to base_url and nowhere else, whatever a server answers), a successful
 * body is cut off past `maxBytes` (a bound on what the SDK buffers, whatever the framing) and an
 * event stream is handed on event by event of at most `maxEventBytes`, and a retry the server asks
 * to wait for is told of and waited for here, on the call's signal (the openai SDK's own wait
 * cannot be cut short, and would hold a stopped call's timer), or refused past `maxRetryWaitMs`.
 */
export function callTransport(setup: TransportSetup): CallTransport {
  let errorBody: string | undefined;
  let attempts = 0;
  let refusedWait: number | undefined;
  const wrapped: Fetch = async (input, init) => {
    attempts += 1;
    const response = await fetch(input, { ...init, redirect: "manual" });
    if (response.body === null) return response;
    if (!response.ok) {
      errorBody = await readPrefix(response.body, MAX_ERROR_BODY_BYTES);
      const headers = await waitForRetry(response, attempts <= setup.maxRetries, setup, (waitMs) => (refusedWait = waitMs));
      return new Response(errorBody, { status: response.status, statusText: response.statusText, headers });
    }
    setup.onProgress();
    let body = response.body.pipeThrough(byteBound(setup.maxBytes, setup.onProgress));
    if (isEventStream(response)) body = body.pipeThrough(sseEvents(setup.maxEventBytes));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch: wrapped, lastErrorBody: () => errorBody, attempts: () => attempts, refusedWaitMs: () => refusedWait };
}

/**
 * The headers the SDK gets with an error answer: a retry's wait past the bound refused (and
 * reported to `refuse`); a shorter one told of and waited out first, so the SDK retries at once.
 * Rejects when the call's signal aborts during the wait.
 */
async function waitForRetry(response: Response, retriesLeft: boolean, setup: TransportSetup, refuse: (waitMs: number) => void): Promise<Headers> {
  const wait = askedWaitMs(response.headers);
  if (!retriesLeft || wait === undefined || wait <= 0 || !sdkRetries(response.status, response.headers)) return response.headers;
  if (wait > setup.maxRetryWaitMs) {
    refuse(wait);
    return withoutRetry(response.headers);
  }
  setup.onRetryWait(wait, response.status);
  await sleep(wait, undefined, { signal: setup.signal });
  return waited(response.headers);
}

/** Whether the SDK reads this successful answer as an event stream: its media type says so, or says nothing. */
function isEventStream(response: Response): boolean {
  const type = mediaTypeOf(response);
  return type === "text/event-stream" || type === "";
}

/** The media type of a response, lower case, without parameters ("" when absent). */
export function mediaTypeOf(response: Response): string {
  return response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
}

function byteBound(maxBytes: number, onProgress: () => void): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      // Erroring the stream also cancels the source, which closes the connection.
      if (seen > maxBytes) return controller.error(new ResponseTooLargeError(maxBytes));
      onProgress();
      controller.enqueue(chunk);
    },
  });
}

/** The first `maxBytes` of a body as text; the rest is not read, and the body is cancelled. */
async function readPrefix(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<string> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.byteLength;
    }
  } catch {
    // A broken error body still leaves its status to report.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(parts).subarray(0, maxBytes).toString("utf8");
}

/** The transport of the call whose async context is running; one SDK client serves every call of an adapter. */
const currentTransport = new AsyncLocalStorage<CallTransport>();

/**
 * The fetch an adapter's one client is made with: it sends through the transport of the call it
 * runs in (see `withTransport`), so each call keeps its own bound, attempts and idle deadline
 * without a client being built per call. Outside a call it refuses, rather than send unbounded.
 */
export const scopedFetch: Fetch = (input, init) => {
  const transport = currentTransport.getStore();
  if (transport === undefined) return Promise.reject(new Error("a model request was made outside a model call"));
  return transport.fetch(input, init);
};

/** Runs `work` with `transport` as the one `scopedFetch` sends through, in its async context and all it starts. */
export function withTransport<T>(transport: CallTransport, work: () => Promise<T>): Promise<T> {
  return currentTransport.run(transport, work);
}

