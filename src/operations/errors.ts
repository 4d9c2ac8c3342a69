/**
 * Why `admit` refused an input. Refusals are values with a stable code, not thrown: the daemon
 * turns each code into its HTTP answer (one table there). Refusals are not stored; only
 * admissions are.
 */
export type AdmissionErrorCode = "operation_conflict" | "invalid_operation_id" | "operation_expired" | "operation_future" | "queue_full";

/** A refusal: its code, a detail naming the offending value and the bound, and the id when it is one. */
export interface AdmissionRefusal {
  readonly ok: false;
  readonly code: AdmissionErrorCode;
  readonly detail: string;
  readonly operationId?: string;
}

/** Builds the refusal for `code`. */
export function refusal(code: AdmissionErrorCode, detail: string, operationId?: string): AdmissionRefusal {
  return operationId === undefined ? { ok: false, code, detail } : { ok: false, code, detail, operationId };
}
