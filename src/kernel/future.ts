/**
 * An execution in flight: outputs stream in from iopub, and `done` settles only once both the
 * shell `execute_reply` and the iopub `idle` status for this request arrived (either order).
 */
import type { KernelMessage } from "@jupyterlab/services";
import type { ExecuteOptions, ExecuteOutput, ExecuteReply } from "./kernel.js";
import { humanSize } from "../json/index.js";
import { boundOutput, boundReply } from "./outputs.js";
import { RECEIVE_BOUNDS, type ReceiveChannel } from "./channels.js";
import { LOST_IDLE_GRACE_MS, MAX_PENDING_OUTPUTS, MAX_PENDING_OUTPUT_BYTES, REPLY_AFTER_IDLE_GRACE_MS } from "./limits.js";
import { noteOutput } from "./messages.js";
import { ExecuteTimeline } from "./timeline.js";
import { type Disposable, Emitter } from "../platform/index.js";

/** The `ename` of the error reply an execution gets when its kernel went idle without sending one. */
export const MISSING_REPLY_ENAME = "NoExecuteReply";

const OUTPUT_TYPES: ReadonlySet<string> = new Set([
  "stream", "display_data", "update_display_data", "execute_result", "error", "clear_output",
]);

export class ExecuteFuture implements AsyncIterable<ExecuteOutput> {
  readonly msgId: string;
  /** Resolves with the execute_reply content (its `status` may be "error"); rejects when the kernel dies or is stopped. */
  readonly done: Promise<ExecuteReply>;
  /**
   * Whether all the kernel sent on iopub so far was taken in; the client that sends the request
   * sets it. A lost idle is counted only then: messages still waiting their turn may hold it.
   */
  iopubDrained: () => boolean = () => true;
  /** Outputs dropped from the iterator's queue because it was not drained (MAX_PENDING_OUTPUTS, MAX_PENDING_OUTPUT_BYTES). */
  droppedOutputs = 0;
  /** Bytes cut from outputs that passed MAX_OUTPUT_MESSAGE_BYTES; each cut output says so itself. */
  cutOutputBytes = 0;
  /** When the request went out, the kernel's header dates of busy, reply and idle, and when each answer came in. */
  readonly timeline = new ExecuteTimeline();
  /**
   * Settles once the kernel has begun running the code (its execute_input) or the execution ended.
   * Before that a signal finds the kernel between requests, where ipykernel ignores SIGINT. A
   * silent request has no execute_input, so its busy stands in: ipykernel publishes that a little
   * before it starts taking signals, which narrows the gap for such requests (albedo's own, never a
   * user's cell) without closing it.
   */
  readonly begun: Promise<void>;
  private markBegun!: () => void;
  private reply: ExecuteReply | undefined;
  private idle = false;
  private failure: unknown;
  private settled = false;
  private resolveDone!: (reply: ExecuteReply) => void;
  private rejectDone!: (error: unknown) => void;
  private readonly outputs = new Emitter<ExecuteOutput>();
  /** Outputs for the iterator, with their sizes; filled only once an iterator exists, so a future nobody iterates keeps nothing. */
  private readonly pending: { output: ExecuteOutput; bytes: number }[] = [];
  private pendingBytes = 0;
  private iterating = false;
  private wake: (() => void) | undefined;
  private replyTimer: NodeJS.Timeout | undefined;
  /** What a dropped connection during this execution may have lost: its idle (iopub), its reply (shell). */
  private readonly lost = { idle: false, reply: false };
  private lostIdleTimer: NodeJS.Timeout | undefined;

  constructor(readonly request: KernelMessage.IExecuteRequestMsg, readonly options: ExecuteOptions = {}) {
    this.msgId = request.header.msg_id;
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // Callers that only iterate still see the failure; an unobserved `done` must not crash the process.
    this.done.catch(() => undefined);
    this.begun = new Promise((resolve) => (this.markBegun = resolve));
    this.done.then(this.markBegun, this.markBegun);
  }

  /** Calls `listener` for each output from now on, each cut to MAX_OUTPUT_MESSAGE_BYTES. */
  onOutput(listener: (output: ExecuteOutput) => void): Disposable {
    return this.outputs.on(listener);
  }

  /** Handles an iopub message whose parent is this request; returns whether it was an output. */
  handleIOPub(message: KernelMessage.IIOPubMessage): boolean {
    if (this.reply !== undefined && !this.idle) this.awaitIdle();
    if (message.header.msg_type === "status") {
      const state = (message as KernelMessage.IStatusMsg).content.execution_state;
      this.timeline.status(state, message.header.date);
      if (state === "idle") this.markIdle();
      if (state === "busy" && this.request.content.silent) this.markBegun();
      return false;
    }
    if (message.header.msg_type === "execute_input") {
      this.markBegun();
      return false;
    }
    if (!OUTPUT_TYPES.has(message.header.msg_type)) return false;
    this.push(message as ExecuteOutput);
    return true;
  }

  /** Records the shell execute_reply for this request. */
  handleReply(message: KernelMessage.IExecuteReplyMsg): void {
    this.timeline.reply(message.header.date);
    this.reply = boundReply(message.content);
    this.settleIfComplete();
    this.awaitIdle();
  }

  /**
   * Once the reply is in (or lost with its connection, and the idle too), counts the idle as come
   * when nothing more for this execution arrives on iopub for LOST_IDLE_GRACE_MS, unless it comes
   * first. ipykernel publishes idle right after the reply, so only a lost idle waits this long: one
   * dropped with its connection (connectionLost), or one the kernel's own socket dropped while its
   * queue was full, because albedo takes a flood of large messages in slowly
   * (KERNEL_RECEIVE_HIGH_WATER_MARK). Each iopub message for it starts the wait again, and it
   * does not end while iopub messages wait their turn (other kernels' floods take the runtime's time).
   */
  private awaitIdle(): void {
    if (this.settled || this.idle || (this.reply === undefined && !(this.lost.idle && this.lost.reply))) return;
    clearTimeout(this.lostIdleTimer);
    // Timers run before the event loop polls its sockets: look once they were polled, when a message already there was taken in.
    this.lostIdleTimer = setTimeout(() => setImmediate(() => {
      if (this.settled || this.idle) return;
      if (!this.iopubDrained()) return this.awaitIdle();
      if (!this.lost.idle) this.push(noteOutput(this.request, `[albedo: no idle status came from the kernel within LOST_IDLE_GRACE_MS (${LOST_IDLE_GRACE_MS} ms) of its last message for this execution; the kernel dropped it, or never sent it]\n`) as ExecuteOutput);
      this.idle = true;
      this.reply ??= missingReply();
      this.settleIfComplete();
    }), LOST_IDLE_GRACE_MS);
  }

  /**
   * The kernel's connection on `channel` was dropped for a message over its bound (RECEIVE_BOUNDS)
   * and made again: a note among the outputs says what was lost. An idle lost on iopub no longer
   * holds the execution past LOST_IDLE_GRACE_MS after its reply (a reply lost on shell is missed
   * REPLY_AFTER_IDLE_GRACE_MS after its idle, as always); with both lost, it ends
   * LOST_IDLE_GRACE_MS after the second loss, as a missing reply.
   */
  connectionLost(channel: ReceiveChannel): void {
    if (this.settled) return;
    const bound = RECEIVE_BOUNDS[channel];
    const limit = `${bound.name} (${humanSize(bound.bytes)})`;
    this.push(noteOutput(this.request, `[albedo: the kernel sent a message over ${limit} on ${channel}; it was dropped, with what the kernel sent on ${channel} until albedo connected again]\n`) as ExecuteOutput);
    if (channel === "iopub") this.lost.idle = true;
    if (channel === "shell") this.lost.reply = true;
    this.awaitIdle();
  }

  /** Fails the execution (kernel death, restart, shutdown); no effect once settled. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.replyTimer);
    clearTimeout(this.lostIdleTimer);
    this.failure = error;
    this.rejectDone(error);
    this.wakeIterator();
  }

  /** Every output from the moment this is called; call it before awaiting anything, as `for await` does. One iterator per future. */
  [Symbol.asyncIterator](): AsyncIterator<ExecuteOutput> {
    this.iterating = true;
    return this.drain();
  }

  private async *drain(): AsyncGenerator<ExecuteOutput> {
    for (;;) {
      const next = this.pending.shift();
      if (next !== undefined) {
        this.pendingBytes -= next.bytes;
        yield next.output;
        continue;
      }
      if (this.settled) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private markIdle(): void {
    this.idle = true;
    this.settleIfComplete();
    if (!this.settled && this.replyTimer === undefined) {
      this.replyTimer = setTimeout(() => {
        this.reply ??= missingReply();
        this.settleIfComplete();
      }, REPLY_AFTER_IDLE_GRACE_MS);
    }
  }

  private settleIfComplete(): void {
    if (this.settled || this.reply === undefined || !this.idle) return;
    this.settled = true;
    clearTimeout(this.replyTimer);
    clearTimeout(this.lostIdleTimer);
    this.timeline.settled();
    this.resolveDone(this.reply);
    this.wakeIterator();
  }

  private push(received: ExecuteOutput): void {
    const { output, bytes, droppedBytes } = boundOutput(received);
    this.cutOutputBytes += droppedBytes;
    if (this.iterating) this.queue(output, bytes);
    this.outputs.fire(output);
    this.wakeIterator();
  }

  private queue(output: ExecuteOutput, bytes: number): void {
    this.pending.push({ output, bytes });
    this.pendingBytes += bytes;
    while (this.pending.length > MAX_PENDING_OUTPUTS || this.pendingBytes > MAX_PENDING_OUTPUT_BYTES) {
      this.pendingBytes -= this.pending.shift()!.bytes;
      this.droppedOutputs += 1;
    }
  }

  private wakeIterator(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

function missingReply(): ExecuteReply {
  return {
    status: "error",
    ename: MISSING_REPLY_ENAME,
    evalue: `the kernel went idle and sent no execute_reply within ${REPLY_AFTER_IDLE_GRACE_MS} ms (REPLY_AFTER_IDLE_GRACE_MS); an interrupt that lands inside ipykernel's request handling ends the request this way`,
    traceback: [],
    execution_count: null,
  };
}
