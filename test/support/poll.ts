/** How long poll() waits unless told otherwise: far above what any condition here should take. */
export const POLL_TIMEOUT_MS = 30_000;
/** Pause between two checks. */
export const POLL_INTERVAL_MS = 20;

export interface PollOptions {
  /** Names the condition in the timeout error; the check's own source text when absent. */
  readonly what?: string;
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
}

/**
 * Resolves once `check` holds, checking every `intervalMs`; throws "timed out after N ms waiting
 * for <what>" when it still does not after `timeoutMs`. An error thrown by `check` ends the wait.
 */
export async function poll(check: () => boolean | Promise<boolean>, options: PollOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? POLL_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? check.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? POLL_INTERVAL_MS));
  }
}
