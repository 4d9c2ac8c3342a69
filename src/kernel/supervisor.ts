/**
 * Capped automatic restarts (K-9). The client reports death; this decides whether to restart,
 * counting restarts inside a sliding window so a kernel that keeps crashing is left dead.
 */
import type { KernelClient } from "./client.js";
import type { Disposable, Log } from "../platform/index.js";
import { MAX_AUTO_RESTARTS, RESTART_WINDOW_MS } from "./limits.js";


/** At most `maxRestarts` restarts within any `windowMs`. */
export class RestartPolicy {
  private readonly history: number[] = [];

  constructor(readonly maxRestarts = MAX_AUTO_RESTARTS, readonly windowMs = RESTART_WINDOW_MS) {}

  /** Records a restart at `now` and returns true, or returns false when the cap is reached. */
  tryConsume(now = Date.now()): boolean {
    while (this.history.length > 0 && now - this.history[0]! >= this.windowMs) this.history.shift();
    if (this.history.length >= this.maxRestarts) return false;
    this.history.push(now);
    return true;
  }
}

export interface SupervisorEvents {
  /** A restart attempt failed to bring the kernel back. */
  readonly onRestartFailed?: (error: unknown) => void;
  /** The policy refused another restart; the kernel stays dead. */
  readonly onGaveUp?: (reason: string) => void;
  readonly log?: Log;
}

/** Restarts `client` when it dies, while `policy` allows; dispose to stop watching. */
export function superviseKernel(client: KernelClient, policy = new RestartPolicy(), events: SupervisorEvents = {}): Disposable {
  return client.onStatus((event) => {
    if (event.status !== "dead") return;
    const reason = event.reason ?? "unknown";
    if (!policy.tryConsume()) {
      events.log?.("warn", "kernel restart cap reached; leaving it dead", { reason, maxRestarts: policy.maxRestarts });
      events.onGaveUp?.(reason);
      return;
    }
    client.restart(`auto-restart after: ${reason}`).catch((error: unknown) => {
      events.log?.("error", "kernel auto-restart failed", { error: String(error) });
      events.onRestartFailed?.(error);
    });
  });
}
