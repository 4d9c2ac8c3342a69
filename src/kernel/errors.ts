import { AppError } from "../errors/index.js";

/** A kernel process that could not be brought to ready. Local: the session layer decides what to tell. */
export class KernelStartError extends Error {
  override readonly name = "KernelStartError";
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stderrTail: string,
  ) {
    super(stderrTail.length > 0 ? `${message}\n--- kernel stderr (last lines) ---\n${stderrTail}` : message);
  }
}

/** The error every pending request and execution fails with when the kernel dies (K-9). */
export function kernelDiedError(reason: string): AppError {
  return new AppError("kernel_died", `kernel died: ${reason}`, { reason });
}

/** The error pending work fails with when the owner restarts or shuts the kernel down. */
export function kernelStoppedError(what: "restarted" | "shut down"): AppError {
  return new AppError("cancelled", `kernel ${what} before the request finished`);
}

/** The error a request fails with when its named deadline passes. */
export function deadlineError(what: string, deadlineName: string, ms: number): AppError {
  return new AppError("timeout", `${what} took longer than ${deadlineName} (${ms} ms)`, { deadline: deadlineName, ms });
}
