/**
 * Errors that cross a wire (JSON-RPC to the kernel, HTTP to clients). Each carries a stable
 * application code; the RPC layer maps it to a JSON-RPC number and the daemon to an HTTP status.
 * Local failures (a bug, a broken invariant) stay plain `Error`s and never reach a caller as a code.
 */
export type AppErrorCode =
  | "reload_required"
  | "not_found"
  | "invalid_params"
  | "limit_exceeded"
  | "forbidden"
  | "cancelled"
  | "timeout"
  | "kernel_died"
  | "conflict";

export class AppError extends Error {
  override readonly name = "AppError";
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly data?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/** True when `error` is an AppError with the given code. */
export function isAppError(error: unknown, code?: AppErrorCode): error is AppError {
  return error instanceof AppError && (code === undefined || error.code === code);
}
