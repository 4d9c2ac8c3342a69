import { setTimeout as sleep } from "node:timers/promises";
import { STORE_BUSY_RETRY_MS, STORE_BUSY_WAIT_MS } from "./limits.js";
import { isSqliteBusy } from "../platform/index.js";

/**
 * Runs `step` (one store call; a write is one transaction) and, while another process holds the
 * database file's lock, runs it again every STORE_BUSY_RETRY_MS for at most `waitMs`, never
 * blocking the event loop in between. The first attempt runs before this returns. Returns what
 * `step` returns; throws the last busy error once `waitMs` passed, or any other error at once.
 */
export async function retryWhileBusy<T>(step: () => T, waitMs: number = STORE_BUSY_WAIT_MS): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return step();
    } catch (error) {
      if (!isSqliteBusy(error) || Date.now() >= deadline) throw error;
    }
    await sleep(STORE_BUSY_RETRY_MS);
  }
}
