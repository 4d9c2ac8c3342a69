import { timingSafeEqual } from "node:crypto";
import { AppError, type AppErrorCode } from "../errors/index.js";
import { INTERNAL_ERROR, METHOD_NOT_FOUND, appErrorNumber } from "./codes.js";
import {
  type JsonRpcId,
  type RpcErrorObject,
  type RpcRequest,
  decodeMessage,
  encodeError,
  encodeNotification,
  encodeResult,
  errorObject,
  peekId,
} from "./protocol.js";
import { LazyAbort } from "./lazyAbort.js";
import { parseParams } from "./methods.js";
import type { Log } from "../platform/index.js";
import { RefusalLog } from "./refusals.js";
import type { CallContext, RouteTable } from "./routes.js";
import { RPC_CALL_TIMEOUT_MS, RPC_MAX_LISTENERS, RPC_MAX_MESSAGE_BYTES, RPC_MAX_PENDING_CALLS } from "./limits.js";

/** Runtime -> kernel notification asking the kernel to cancel a cell's task. */
export const RPC_CANCEL_METHOD = "albedo/cancel";
/** Kernel -> runtime notification registering a peer for notifications. */
export const RPC_HELLO_METHOD = "albedo/hello";

/** An opaque peer address given by the transport (a hex routing id for ZeroMQ). */
export type PeerId = string;

export interface DispatcherOptions {
  readonly token: string;
  readonly routes: RouteTable;
  readonly send: (peer: PeerId, text: string) => void;
  /** Where the channel reports refusals and handler failures; the detail never reaches the kernel. */
  readonly logger: Log;
  readonly callTimeoutMs?: number;
  readonly maxMessageBytes?: number;
}

interface PendingCall {
  readonly peer: PeerId;
  readonly id: string | number;
  readonly method: string;
  readonly cell: string | undefined;
  readonly abort: LazyAbort;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function appError(error: AppError): RpcErrorObject {
  return errorObject(appErrorNumber(error.code), error.message, error.data);
}

/**
 * The transport-independent half of the RPC channel: token check, size limit, decoding, dispatch
 * against the route table captured at arrival, deadlines, cancellation and replies.
 */
export class RpcDispatcher {
  private table: RouteTable;
  private readonly token: Buffer;
  private readonly pending = new Set<PendingCall>();
  private readonly listeners = new Set<PeerId>();
  private readonly callTimeoutMs: number;
  private readonly maxBytes: number;
  private readonly refusals: RefusalLog;
  private closed = false;

  constructor(private readonly options: DispatcherOptions) {
    this.table = options.routes;
    this.token = Buffer.from(options.token, "utf8");
    this.callTimeoutMs = options.callTimeoutMs ?? RPC_CALL_TIMEOUT_MS;
    this.maxBytes = options.maxMessageBytes ?? RPC_MAX_MESSAGE_BYTES;
    this.refusals = new RefusalLog(options.logger);
  }

  /** The current route table. */
  get routes(): RouteTable {
    return this.table;
  }

  /** Number of calls still waiting for an answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Replaces the route table in one step; calls already running keep the table they started on. */
  swapRoutes(table: RouteTable): void {
    this.table = table;
  }

  /**
   * Handles one inbound message (`[token, json]` frames) from `peer`. Messages that arrived together
   * may share an `arrival` (see CallContext.arrival); alone, a message is an arrival of its own.
   * Never throws.
   */
  receive(peer: PeerId, frames: readonly Buffer[], arrival: object = {}): void {
    if (this.closed) return;
    const [token, body] = frames;
    if (frames.length !== 2 || token === undefined || body === undefined || !this.tokenMatches(token)) {
      this.refuse(peer, frames);
      return;
    }
    if (body.length > this.maxBytes) {
      this.refusals.refused("oversized", peer, { size: body.length });
      this.reply(peer, null, this.limitError("message", body.length));
      return;
    }
    const decoded = decodeMessage(body);
    if (decoded.kind === "invalid") this.reply(peer, decoded.id, decoded.error);
    else if (decoded.kind === "notification") this.onNotification(peer, decoded.method);
    else this.call(peer, decoded.request, arrival);
  }

  /** Fails every pending call of `cell` with `cancelled` and asks the kernel to cancel the cell's task; returns how many calls failed. */
  cancelCell(cell: string, reason = "the cell was interrupted"): number {
    const calls = [...this.pending].filter((call) => call.cell === cell);
    for (const call of calls) this.fail(call, new AppError("cancelled", `call cancelled: ${reason}`, { cell }));
    this.notify(RPC_CANCEL_METHOD, { cell });
    return calls.length;
  }

  /** Fails every pending call with `code` (e.g. kernel_died); returns how many failed. */
  failAll(code: AppErrorCode, message: string): number {
    const calls = [...this.pending];
    for (const call of calls) this.fail(call, new AppError(code, message));
    return calls.length;
  }

  /** Sends a notification to every kernel peer that said hello. */
  notify(method: string, params: unknown): void {
    const text = encodeNotification(method, params);
    for (const peer of this.listeners) this.options.send(peer, text);
  }

  /** Aborts every pending handler without replying, logs the refusals not yet logged, and ignores later messages. Idempotent. */
  close(): void {
    if (!this.closed) this.refusals.flush();
    this.closed = true;
    for (const call of this.pending) this.settle(call, new AppError("cancelled", "the RPC channel closed"));
    this.pending.clear();
  }

  private tokenMatches(token: Buffer): boolean {
    return token.length === this.token.length && timingSafeEqual(token, this.token);
  }

  private refuse(peer: PeerId, frames: readonly Buffer[]): void {
    this.refusals.refused("token", peer, { frames: frames.length });
    const body = frames.at(-1);
    const id = body !== undefined && body.length <= this.maxBytes ? peekId(body.toString("utf8")) : null;
    this.reply(peer, id, appError(new AppError("forbidden", "refused: wrong token for this RPC channel")));
  }

  private limitError(what: "message" | "reply", size: number): RpcErrorObject {
    const message = `${what} of ${size} bytes exceeds RPC_MAX_MESSAGE_BYTES (${this.maxBytes})`;
    return appError(new AppError("limit_exceeded", message, { limit: "RPC_MAX_MESSAGE_BYTES", max: this.maxBytes, size }));
  }

  private onNotification(peer: PeerId, method: string): void {
    if (method !== RPC_HELLO_METHOD) {
      this.refusals.refused("notification", peer, { method });
      return;
    }
    this.listeners.delete(peer);
    this.listeners.add(peer);
    if (this.listeners.size > RPC_MAX_LISTENERS) {
      const oldest = this.listeners.values().next().value;
      if (oldest !== undefined) this.listeners.delete(oldest);
    }
  }

  private call(peer: PeerId, request: RpcRequest, arrival: object): void {
    const route = this.table.get(request.method);
    if (route === undefined) {
      this.reply(peer, request.id, errorObject(METHOD_NOT_FOUND, `method not found: ${request.method}`));
      return;
    }
    if (this.pending.size >= RPC_MAX_PENDING_CALLS) {
      const message = `${this.pending.size} calls in flight reach RPC_MAX_PENDING_CALLS (${RPC_MAX_PENDING_CALLS})`;
      this.reply(peer, request.id, appError(new AppError("limit_exceeded", message, { limit: "RPC_MAX_PENDING_CALLS" })));
      return;
    }
    const { id, method, cell } = request;
    const abort = new LazyAbort();
    const context: CallContext = {
      method,
      cell,
      get signal() {
        return abort.signal;
      },
      arrival,
    };
    // The handler starts now rather than a microtask later, and an answer it has at once leaves at
    // once: before the receive loop waits for the next message, with no deadline timer or
    // pending entry to make and clear (nothing can time out or be cancelled in between).
    let answer: unknown;
    try {
      const params = route.params === undefined ? request.params : parseParams(method, route.params, request.params);
      answer = route.handler(params, context);
    } catch (error) {
      this.reply(peer, id, this.handlerError(method, error));
      return;
    }
    if (!isPromiseLike(answer)) {
      this.answer(peer, id, method, answer);
      return;
    }
    const call: PendingCall = { peer, id, method, cell, abort, timer: undefined, done: false };
    const timeoutMs = route.timeoutMs ?? this.callTimeoutMs;
    call.timer = setTimeout(() => {
      this.fail(call, new AppError("timeout", `${method} did not answer within ${timeoutMs} ms`, { timeoutMs }));
    }, timeoutMs);
    this.pending.add(call);
    answer.then(
      (result) => this.succeed(call, result),
      (error: unknown) => this.settleAndReply(call, this.handlerError(method, error)),
    );
  }

  private handlerError(method: string, error: unknown): RpcErrorObject {
    if (error instanceof AppError) return appError(error);
    this.options.logger("error", "rpc: handler failed", { method, error: String(error), stack: (error as Error)?.stack });
    return errorObject(INTERNAL_ERROR, `internal error while serving ${method}`);
  }

  private succeed(call: PendingCall, result: unknown): void {
    if (call.done) return;
    this.settle(call, undefined);
    this.answer(call.peer, call.id, call.method, result);
  }

  /** Sends `result` as the answer to call `id`, or the error that says why it cannot be sent. */
  private answer(peer: PeerId, id: string | number, method: string, result: unknown): void {
    let text: string;
    try {
      text = encodeResult(id, result);
    } catch (error) {
      this.reply(peer, id, this.handlerError(method, error));
      return;
    }
    const size = Buffer.byteLength(text, "utf8");
    if (size > this.maxBytes) {
      this.reply(peer, id, this.limitError("reply", size));
      return;
    }
    this.options.send(peer, text);
  }

  /** Ends a call from outside its handler: aborts the handler's signal, then replies with `error`. */
  private fail(call: PendingCall, error: AppError): void {
    if (call.done) return;
    this.settle(call, error);
    this.reply(call.peer, call.id, appError(error));
  }

  private settleAndReply(call: PendingCall, error: RpcErrorObject): void {
    if (call.done) return;
    this.settle(call, undefined);
    this.reply(call.peer, call.id, error);
  }

  private settle(call: PendingCall, abortReason: AppError | undefined): void {
    call.done = true;
    clearTimeout(call.timer);
    this.pending.delete(call);
    if (abortReason !== undefined) call.abort.abort(abortReason);
  }

  private reply(peer: PeerId, id: JsonRpcId, error: RpcErrorObject): void {
    let text: string;
    try {
      text = encodeError(id, error);
    } catch {
      text = encodeError(id, errorObject(error.code, error.message));
    }
    this.options.send(peer, text);
  }
}
