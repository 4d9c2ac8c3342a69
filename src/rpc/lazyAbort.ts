/**
 * A call's abort signal, made only when its handler asks for it. Most handlers never look at the
 * signal, and an AbortController costs about as much as decoding the whole request.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;

  /** The call's signal; it is already aborted, with the reason, when the call ended before anyone asked. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Aborts the signal with `reason`; later calls change nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
