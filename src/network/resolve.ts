/**
 * Name lookups for the proxy (N-2): the proxy resolves every name itself and connects to an
 * address it checked, never to a name. The resolver is a function so a caller (a test) can map
 * names its own way; the system one goes through getaddrinfo with a bound on lookups running and
 * waiting across the whole process.
 */
import { lookup } from "node:dns/promises";
import { MAX_LOOKUPS_IN_FLIGHT, MAX_LOOKUPS_QUEUED, MAX_RESOLVED_ADDRESSES } from "./limits.js";

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to its addresses; `signal` aborts a lookup that has not started. */
export type Resolver = (name: string, signal: AbortSignal) => Promise<readonly ResolvedAddress[]>;

/** A name that could not be resolved: `message` says why in words a denial line can carry. */
export class LookupError extends Error {
  override readonly name = "LookupError";
}

let running = 0;
const queue: Array<() => void> = [];

/** Waits for one of MAX_LOOKUPS_IN_FLIGHT slots; throws LookupError when the queue is full or `signal` aborts first. */
async function slot(signal: AbortSignal): Promise<void> {
  if (running < MAX_LOOKUPS_IN_FLIGHT) {
    running += 1;
    return;
  }
  if (queue.length >= MAX_LOOKUPS_QUEUED) throw new LookupError(`${MAX_LOOKUPS_QUEUED} name lookups are already waiting (MAX_LOOKUPS_QUEUED)`);
  await new Promise<void>((resolve, reject) => {
    const start = () => {
      signal.removeEventListener("abort", leave);
      resolve();
    };
    const leave = () => {
      queue.splice(queue.indexOf(start), 1);
      reject(new LookupError("the lookup was given up before it started"));
    };
    queue.push(start);
    signal.addEventListener("abort", leave, { once: true });
  });
}

/** Hands the slot to the next waiter, or frees it. */
function release(): void {
  const next = queue.shift();
  if (next) next();
  else running -= 1;
}

/** getaddrinfo through a process-wide bound; the slot is held until the lookup returns, however long. */
export const systemResolver: Resolver = async (name, signal) => {
  await slot(signal);
  try {
    const found = await lookup(name, { all: true, verbatim: true });
    return found.slice(0, MAX_RESOLVED_ADDRESSES).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new LookupError(code === "ENOTFOUND" ? "no such host" : `the lookup failed (${code ?? String(error)})`);
  } finally {
    release();
  }
};

/** `resolver(name)` within `timeoutMs`; throws LookupError naming the deadline, or the resolver's own failure. */
export async function resolveWithin(resolver: Resolver, name: string, timeoutMs: number, deadlineName: string): Promise<readonly ResolvedAddress[]> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new LookupError(`the lookup took over ${timeoutMs} ms (${deadlineName})`));
    }, timeoutMs);
  });
  try {
    const found = await Promise.race([resolver(name, abort.signal), expired]);
    if (found.length === 0) throw new LookupError("no address");
    return found.slice(0, MAX_RESOLVED_ADDRESSES);
  } catch (error) {
    throw error instanceof LookupError ? error : new LookupError(`the lookup failed (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
