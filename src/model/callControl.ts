import { interruptedError, ModelError } from "./errors.js";

type StopReason = "interrupted" | "reply_timeout" | "idle_timeout";

export interface CallDeadlines {
  readonly replyTimeoutMs: number;
  readonly streamIdleTimeoutMs: number;
}

/**
 * The one signal a model call runs under. It aborts when the caller's signal does, when the whole
 * call passes its reply deadline, or when a started reply goes silent past the idle deadline; the
 * reason is kept, because the SDK reports every abort alike (and ends a stream on one silently).
 */
export class CallControl {
  readonly #controller = new AbortController();
  readonly #replyTimer: NodeJS.Timeout;
  #idleTimer: NodeJS.Timeout | undefined;
  #reason: StopReason | undefined;
  #reject: (error: ModelError) => void = () => undefined;
  /** Rejects with the stop's ModelError as soon as the call is stopped; never resolves. */
  readonly stopped: Promise<never>;

  constructor(
    private readonly caller: AbortSignal,
    private readonly deadlines: CallDeadlines,
    private readonly server: string,
  ) {
    this.stopped = new Promise<never>((_, reject) => (this.#reject = reject));
    this.stopped.catch(() => undefined);
    this.#replyTimer = setTimeout(() => this.#stop("reply_timeout"), deadlines.replyTimeoutMs);
    caller.addEventListener("abort", this.#onAbort, { once: true });
    if (caller.aborted) this.#stop("interrupted");
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The error of the stop, or undefined while the call runs. */
  stopError(): ModelError | undefined {
    if (this.#reason === "interrupted") return interruptedError();
    if (this.#reason === "reply_timeout") {
      return new ModelError("timeout", `the model call took longer than MODEL_REPLY_TIMEOUT_MS (${this.deadlines.replyTimeoutMs} ms)`);
    }
    if (this.#reason === "idle_timeout") {
      return new ModelError("timeout", `the model server at ${this.server} sent nothing for MODEL_STREAM_IDLE_TIMEOUT_MS (${this.deadlines.streamIdleTimeoutMs} ms) in the middle of its reply`);
    }
    return undefined;
  }

  /** (Re)arms the idle deadline: the reply has started, or more of it arrived. */
  progress(): void {
    if (this.#reason !== undefined) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => this.#stop("idle_timeout"), this.deadlines.streamIdleTimeoutMs);
  }

  /**
   * Ends the call's life: clears the timers, lets go of the caller's signal (a turn's signal
   * outlives many calls) and aborts whatever of the HTTP exchange is still open, so that no
   * path out of a call, a refused reply included, leaves a connection behind.
   */
  dispose(): void {
    clearTimeout(this.#replyTimer);
    clearTimeout(this.#idleTimer);
    this.caller.removeEventListener("abort", this.#onAbort);
    this.#controller.abort();
  }

  readonly #onAbort = (): void => this.#stop("interrupted");

  #stop(reason: StopReason): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.dispose();
    this.#reject(this.stopError() as ModelError);
  }
}
