import { AsyncLocalStorage } from "node:async_hooks";
import { MAX_ERROR_BODY_BYTES } from "./limits.js";

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
}

/**
 * Wraps the global fetch for one call: redirects are never followed (the request, with the
 * conversation and the key, goes to base_url and nowhere else, whatever a server answers), a successful
 * body is cut off past `maxBytes` (a bound on what the SDK buffers, whatever the framing), and
 * `onProgress` hears of its headers and of every piece of it (the idle deadline).
 */
export function callTransport(maxBytes: number, onProgress: () => void): CallTransport {
  let errorBody: string | undefined;
  let attempts = 0;
  const wrapped: Fetch = async (input, init) => {
    attempts += 1;
    const response = await fetch(input, { ...init, redirect: "manual" });
    if (response.body === null) return response;
    if (!response.ok) {
      errorBody = await readPrefix(response.body, MAX_ERROR_BODY_BYTES);
      return new Response(errorBody, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    onProgress();
    return new Response(response.body.pipeThrough(byteBound(maxBytes, onProgress)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return { fetch: wrapped, lastErrorBody: () => errorBody, attempts: () => attempts };
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

