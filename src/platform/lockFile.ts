/**
 * The parts every pid lock file shares: what a lock names, whether its holder still runs, and how
 * a stale lock is removed without racing another process that breaks it at the same time.
 */
import { randomBytes } from "node:crypto";
import { link, readFile, rename, unlink } from "node:fs/promises";
import { isSameProcessAlive, processIdentityOf, type ProcessIdentity } from "./process.js";

/** What a lock file records: its holder's identity and, where the lock uses one, the token of this taking. */
export interface LockHolder extends ProcessIdentity {
  readonly token?: string;
}

/** The holder a lock file's text names (`{"pid", "start_time"?, "token"?}`), or undefined while it is empty, partial or names no pid. */
export function lockHolderOf(text: string): LockHolder | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const holder = processIdentityOf(value);
  const token = (value as { token?: unknown }).token;
  return holder && (typeof token === "string" ? { ...holder, token } : holder);
}

/**
 * Whether `holder` still holds its lock. A lock naming this process is held only when this
 * process took it (`takenHere`): otherwise it is a leftover of an earlier process given this pid.
 */
export function holderRuns(holder: ProcessIdentity, takenHere: boolean): boolean {
  return holder.pid === process.pid ? takenHere : isSameProcessAlive(holder);
}

/**
 * Removes the lock file `lockFile` that read `seen` and was judged stale. It is renamed aside
 * first, so two processes breaking the same stale lock cannot delete a fresh one: whoever moved a
 * lock that was not the stale one puts it back. A lock already gone is fine.
 */
export async function breakStaleLock(lockFile: string, seen: string): Promise<void> {
  const aside = `${lockFile}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await rename(lockFile, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if ((await readFile(aside, "utf8").catch(() => undefined)) !== seen) await link(aside, lockFile).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}
