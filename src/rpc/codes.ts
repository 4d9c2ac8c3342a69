import type { AppErrorCode } from "../errors/index.js";

/** JSON-RPC 2.0 standard error codes. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/**
 * The application range: one fixed JSON-RPC number per AppError code. The kernel package keeps
 * the same numbers (kernel/albedo/_errors.py); change both together or not at all.
 */
export const APP_ERROR_NUMBERS: Readonly<Record<AppErrorCode, number>> = Object.freeze({
  reload_required: -32001,
  not_found: -32002,
  invalid_params: -32003,
  limit_exceeded: -32004,
  forbidden: -32005,
  cancelled: -32006,
  timeout: -32007,
  kernel_died: -32008,
  conflict: -32009,
});

const CODE_BY_NUMBER = new Map<number, AppErrorCode>(
  Object.entries(APP_ERROR_NUMBERS).map(([code, number]) => [number, code as AppErrorCode]),
);

/** The JSON-RPC number for an application error code. */
export function appErrorNumber(code: AppErrorCode): number {
  return APP_ERROR_NUMBERS[code];
}

/** The application code for a JSON-RPC number, or undefined when the number is not in the range. */
export function appErrorCode(number: number): AppErrorCode | undefined {
  return CODE_BY_NUMBER.get(number);
}
