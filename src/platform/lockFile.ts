/**
 * Pid lock files an earlier albedo wrote (`{"pid", "start_time"?, "token"?}`, or a bare pid) where
 * kernel locks (fileLock.ts) now live. Such a file is not empty, which a kernel lock's file always
 * is: while the process it names still runs, it holds the lock as it always did; once that
 * process is gone, the file is removed so the kernel lock can be taken on a fresh one.
 */
import { randomBytes } from "node:crypto";
import { link, readFile, rename, stat, unlink } from "node:fs/promises";
import { isSameProcessAlive, processIdentityOf, type ProcessIdentity } from "./process.js";

/**
 * The holder of the earlier albedo's pid lock at `file` while that process still runs; otherwise
 * undefined, after removing such a file when its holder is gone (or it names none). An absent or
 * empty file is left alone and not read: opening it could drop a kernel lock this process holds.
 */
export async function clearPidLock(file: string): Promise<ProcessIdentity | undefined> {
  const found = await stat(file).catch(() => undefined);
  if (found === undefined || !found.isFile() || found.size === 0) return undefined;
  const seen = await readFile(file, "utf8").catch(() => undefined);
  if (seen === undefined) return undefined;
  const holder = holderOf(seen);
  // This process never takes such a lock, so one naming its pid is a leftover of an earlier process given the pid.
  if (holder !== undefined && holder.pid !== process.pid && isSameProcessAlive(holder)) return holder;
  await removeStale(file, seen);
  return undefined;
}

/** The process a pid lock's text names, or undefined when it names none. */
function holderOf(text: string): ProcessIdentity | undefined {
  if (/^\s*\d+\s*$/.test(text)) return processIdentityOf({ pid: Number(text) });
  try {
    return processIdentityOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * Removes the stale lock `file` that read `seen`. It is renamed aside first, so two processes
 * clearing the same lock cannot delete a fresh one: whoever moved a file that was not the stale
 * one puts it back. A file already gone is fine.
 */
async function removeStale(file: string, seen: string): Promise<void> {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if ((await readFile(aside, "utf8").catch(() => undefined)) !== seen) await link(aside, file).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}
