/**
 * Requests beside the SDK Client on the same transport (M-6). The SDK's 2026-07-28 codec refuses
 * the Tasks extension's traffic (a `resultType: "task"` answer, the `tasks/*` methods), so those
 * requests are framed here (the per-request `_meta` envelope, with the extension in the client's
 * capabilities) and their answers are taken off the transport before the Client sees them. Ids
 * are strings of our own prefix, so they never meet the Client's numeric ids.
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { MAX_MCP_LATE_ANSWERS } from "./limits.js";

/** The Tasks extension's identifier. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

/** A JSON-RPC error answer, kept as data. */
export class RawRpcError extends Error {
  override readonly name = "RawRpcError";
  constructor(readonly code: number, message: string, readonly data: unknown) {
    super(message);
  }
}

/** The request was given up: its signal aborted, or the connection closed. */
export class RawRequestAborted extends Error {
  override readonly name = "RawRequestAborted";
  /** True when the connection closed under the request, false when its signal aborted. */
  constructor(message: string, readonly closed = false) {
    super(message);
  }
}

export interface RawFraming {
  readonly protocolVersion: string;
  readonly clientInfo: { readonly name: string; readonly version: string };
}

interface Pending {
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: Error) => void;
}

export class RawChannel {
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly prefix = `albedo-${process.pid}-`;
  /** Ids of requests given up whose late answers are still heard, oldest first. */
  private readonly late: string[] = [];

  /** Takes the transport's inbound messages first (call after the Client connected): answers to our ids stop here, the rest go on. */
  constructor(private readonly transport: Transport, private readonly framing: RawFraming) {
    const delivered = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.take(message)) delivered?.(message, extra);
    };
    const closed = transport.onclose;
    transport.onclose = () => {
      this.failAll(new RawRequestAborted("the connection closed", true));
      closed?.();
    };
  }

  /**
   * Sends `method` with `params` framed for 2026-07-28 (the Tasks extension declared) and answers
   * its result; rejects with RawRpcError for an error answer, RawRequestAborted when `signal`
   * aborts (`onAbort` runs first, e.g. to tell the server) or the connection closes.
   */
  request(method: string, params: Record<string, unknown>, signal: AbortSignal, onAbort?: (id: string) => void, onLate?: (result: Record<string, unknown>) => void): Promise<Record<string, unknown>> {
    const id = `${this.prefix}${++this.next}`;
    const message = { jsonrpc: "2.0", id, method, params: { ...params, _meta: this.envelope() } } as JSONRPCMessage;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new RawRequestAborted(`${method} was given up before it was sent`));
      const stop = new AbortController();
      const abort = () => {
        this.pending.delete(id);
        // An answer may still come (the server had answered before it heard the abort): `onLate` hears it.
        if (onLate !== undefined) this.awaitLate(id, onLate);
        onAbort?.(id);
        stop.abort();
        reject(new RawRequestAborted(`${method} was given up`));
      };
      signal.addEventListener("abort", abort, { once: true });
      const done = () => signal.removeEventListener("abort", abort);
      this.pending.set(id, {
        resolve: (result) => (done(), resolve(result)),
        reject: (error) => (done(), reject(error)),
      });
      this.transport.send(message, { requestSignal: stop.signal }).catch((error: unknown) => {
        if (!this.pending.delete(id)) return;
        done();
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  /** Sends a notification framed like the requests (the stdio cancellation of a raw request). */
  async notify(method: string, params: Record<string, unknown>): Promise<void> {
    await this.transport.send({ jsonrpc: "2.0", method, params } as JSONRPCMessage).catch(() => undefined);
  }

  /** Keeps listening for `id`'s answer after its request was given up; at most MAX_MCP_LATE_ANSWERS such ids, the oldest dropped. */
  private awaitLate(id: string, onLate: (result: Record<string, unknown>) => void): void {
    this.pending.set(id, { resolve: onLate, reject: () => undefined });
    this.late.push(id);
    if (this.late.length > MAX_MCP_LATE_ANSWERS) this.pending.delete(this.late.shift()!);
  }

  private envelope(): Record<string, unknown> {
    return {
      [PROTOCOL_VERSION_KEY]: this.framing.protocolVersion,
      [CLIENT_INFO_KEY]: { ...this.framing.clientInfo },
      [CLIENT_CAPABILITIES_KEY]: { extensions: { [TASKS_EXTENSION]: {} } },
    };
  }

  /** Whether `message` answers one of our requests (then it is settled here). */
  private take(message: JSONRPCMessage): boolean {
    const { id } = message as { id?: unknown };
    if (typeof id !== "string" || !id.startsWith(this.prefix) || "method" in message) return false;
    const waiting = this.pending.get(id);
    // An answer to a request given up (and no longer listened for) is dropped: it is ours, never the Client's.
    if (waiting === undefined) return true;
    this.pending.delete(id);
    const lateAt = this.late.indexOf(id);
    if (lateAt >= 0) this.late.splice(lateAt, 1);
    const { result, error } = message as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (error !== undefined) {
      waiting.reject(new RawRpcError(typeof error.code === "number" ? error.code : 0, typeof error.message === "string" ? error.message : "an error without a message", error.data));
    } else if (typeof result === "object" && result !== null && !Array.isArray(result)) {
      waiting.resolve(result as Record<string, unknown>);
    } else {
      waiting.reject(new RawRpcError(0, "the answer has no result object", undefined));
    }
    return true;
  }

  private failAll(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.late.length = 0;
    for (const item of waiting) item.reject(error);
  }
}
