/** What the CLI tells a person after Ctrl-C asked the kernel to stop a cell (or a chat's turn). */
import { visibleControls } from "../../text/index.js";
import type { CliIO } from "../plumbing/command.js";

/** How long a cell may keep running after an interrupt before the CLI says it still is. */
export const INTERRUPT_NOTICE_MS = 3_000;

export interface InterruptRequest {
  /** Asks the kernel to interrupt what is running. */
  readonly interrupt: () => Promise<void>;
  /** Settles when what was interrupted ends, however it ends. */
  readonly ended: Promise<unknown>;
  /** What is interrupted, as the notices name it: "cell" (the default) or "turn". */
  readonly what?: string;
  readonly io: CliIO;
  /** The command speaking, e.g. "albedo exec". */
  readonly who: string;
  /** What the person can do when the cell does not stop, e.g. "press Ctrl-C again to quit". */
  readonly next: string;
  /** Overrides INTERRUPT_NOTICE_MS. */
  readonly noticeMs?: number;
}

/**
 * Interrupts what is running (a cell, or a chat's turn) and stays quiet when that works. When the
 * request fails, or it is still running INTERRUPT_NOTICE_MS later (a cell caught KeyboardInterrupt,
 * or sits in code that never looks at signals), it says so on stderr along with `next`. Without
 * that, a cell that did not stop looks the same as one about to.
 */
export function interruptRunning(request: InterruptRequest): void {
  const { io, who, next, what = "cell", noticeMs = INTERRUPT_NOTICE_MS } = request;
  let ended = false;
  const timer = setTimeout(() => {
    if (!ended) io.stderr.write(`${who}: the ${what} is still running ${seconds(noticeMs)} after the interrupt; ${next}\n`);
  }, noticeMs);
  timer.unref();
  const settle = () => {
    ended = true;
    clearTimeout(timer);
  };
  request.ended.then(settle, settle);
  request.interrupt().catch((error: unknown) => {
    clearTimeout(timer);
    if (ended) return;
    const reason = visibleControls(error instanceof Error ? error.message : String(error));
    io.stderr.write(`${who}: could not interrupt the ${what === "cell" ? "kernel" : what} (${reason}); ${next}\n`);
  });
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
