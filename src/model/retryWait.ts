/**
 * The waits a model server asks for before a retry. Both SDKs retry an error answer after the
 * wait its `retry-after-ms` or `retry-after` header names, of any length, silently (and the
 * openai SDK's wait cannot be cut short). The transport reads the same headers first: a wait up
 * to the bound is told to the caller and waited out there; a longer one is refused, so the call
 * ends at once instead of sleeping for a day.
 */

/** Headers that name a wait before a retry, and the one that tells both SDKs not to retry. */
const RETRY_AFTER_MS = "retry-after-ms";
const RETRY_AFTER = "retry-after";
const SHOULD_RETRY = "x-should-retry";

/**
 * The wait, in ms, an answer's headers ask for before a retry, read as the SDKs read it
 * (`retry-after-ms`, else `retry-after` as seconds or as an HTTP date); undefined when they name none.
 */
export function askedWaitMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers.get(RETRY_AFTER_MS) ?? "");
  if (!Number.isNaN(ms) && ms !== 0) return ms;
  const after = headers.get(RETRY_AFTER);
  if (!after) return undefined;
  const seconds = Number.parseFloat(after);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : date - now;
}

/** Whether an SDK retries an error answer of this status with these headers (their shared rule). */
export function sdkRetries(status: number, headers: Headers): boolean {
  const said = headers.get(SHOULD_RETRY);
  if (said === "true") return true;
  if (said === "false") return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** `headers` telling the SDK not to retry, and naming no wait. */
export function withoutRetry(headers: Headers): Headers {
  const refused = new Headers(headers);
  refused.delete(RETRY_AFTER_MS);
  refused.delete(RETRY_AFTER);
  refused.set(SHOULD_RETRY, "false");
  return refused;
}

/** `headers` once their wait was waited out: the SDK retries after a millisecond (zero would send it back to `retry-after`). */
export function waited(headers: Headers): Headers {
  const now = new Headers(headers);
  now.delete(RETRY_AFTER);
  now.set(RETRY_AFTER_MS, "1");
  return now;
}

/** A wait for people: "45 s", "2 min", "1 day". */
export function waitText(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 2 * 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}
