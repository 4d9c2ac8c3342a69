/**
 * The refusals `admit` can answer with, each with its HTTP status. They are values, not thrown:
 * the daemon sends them as problem documents. Refusals are not stored; only admissions are.
 */
export const ADMISSION_ERRORS = {
  operation_conflict: { status: 409, title: "The operation id was already used with a different body" },
  invalid_operation_id: { status: 400, title: "The operation id is not a UUIDv7" },
  operation_expired: { status: 410, title: "The operation id is older than the receipt retention" },
  operation_future: { status: 400, title: "The operation id lies too far in the future" },
  queue_full: { status: 429, title: "The session has too many waiting inputs" },
  invalid_input: { status: 400, title: "The input is malformed" },
} as const;

export type AdmissionErrorCode = keyof typeof ADMISSION_ERRORS;

/** A refusal as sent: the HTTP status and a problem body with a stable code. */
export interface AdmissionRefusal {
  readonly ok: false;
  readonly status: number;
  readonly body: {
    readonly code: AdmissionErrorCode;
    readonly title: string;
    readonly detail: string;
    readonly operationId?: string;
  };
}

/** Builds the refusal for `code`; `detail` names the offending value and the bound. */
export function refusal(code: AdmissionErrorCode, detail: string, operationId?: string): AdmissionRefusal {
  const entry = ADMISSION_ERRORS[code];
  const body = operationId === undefined ? { code, title: entry.title, detail } : { code, title: entry.title, detail, operationId };
  return { ok: false, status: entry.status, body };
}
