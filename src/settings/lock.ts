import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "../errors/index.js";
import { Mutex } from "./mutex.js";
import { breakStaleLock, currentProcess, holderRuns, lockHolderOf } from "../platform/index.js";

/** How long a settings writer waits for the state dir's lock before giving up. */
export const SETTINGS_LOCK_TIMEOUT_MS = 10_000;
/** Pause between two attempts at a lock file another process holds. */
export const SETTINGS_LOCK_RETRY_MS = 5;
/** Name of the cross-process lock file inside the state dir. */
export const SETTINGS_LOCK_FILE = "settings.lock";

const mutexes = new Map<string, Mutex>();
/** The tokens of the lock files this process holds; a lock naming this pid with another token is a leftover. */
const heldTokens = new Set<string>();

/**
 * Runs `fn` holding the state dir's settings lock: an in-process mutex, then a lock file created
 * with O_EXCL. A lock file whose holder no longer runs is broken: its pid is dead, its pid now
 * belongs to a process with another start time, or it names this process but no lock this
 * process took. Throws AppError "timeout" when the lock is not had within
 * SETTINGS_LOCK_TIMEOUT_MS; otherwise returns or throws what `fn` does.
 */
export async function withSettingsLock<T>(stateDir: string, fn: () => Promise<T>): Promise<T> {
  const dir = resolve(stateDir);
  const lockPath = join(dir, SETTINGS_LOCK_FILE);
  const deadline = Date.now() + SETTINGS_LOCK_TIMEOUT_MS;
  let mutex = mutexes.get(dir);
  if (!mutex) mutexes.set(dir, (mutex = new Mutex()));
  await mutex.acquire(SETTINGS_LOCK_TIMEOUT_MS, () => timeoutError(lockPath, "another writer in this process"));
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const token = await acquireLockFile(lockPath, deadline);
    try {
      return await fn();
    } finally {
      await releaseLockFile(lockPath, token);
    }
  } finally {
    mutex.release();
    if (mutex.idle) mutexes.delete(dir);
  }
}

/** Creates the lock file; returns the content written, which names this holder. */
async function acquireLockFile(lockPath: string, deadline: number): Promise<string> {
  const token = randomBytes(8).toString("hex");
  const content = JSON.stringify({ ...currentProcess(), token });
  for (;;) {
    try {
      const handle = await open(lockPath, "wx", 0o600);
      try {
        await handle.writeFile(content);
      } catch (error) {
        // An empty lock (a full disk took the write) would block every writer until it looked stale.
        await unlink(lockPath).catch(() => undefined);
        throw error;
      } finally {
        await handle.close();
      }
      heldTokens.add(token);
      return content;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (await breakIfStale(lockPath)) continue;
    if (Date.now() >= deadline) throw timeoutError(lockPath, await describeHolder(lockPath));
    await sleep(SETTINGS_LOCK_RETRY_MS);
  }
}

async function releaseLockFile(lockPath: string, content: string): Promise<void> {
  heldTokens.delete(lockHolderOf(content)?.token ?? "");
  // Only remove the file if it is still ours: a peer may have (wrongly) broken and retaken it.
  if ((await readOrUndefined(lockPath)) === content) await unlink(lockPath).catch(() => undefined);
}

/** Removes the lock file when its holder is dead; true when the caller should retry at once. */
async function breakIfStale(lockPath: string): Promise<boolean> {
  const seen = await readOrUndefined(lockPath);
  if (seen === undefined) return true;
  if (!(await isStale(lockPath, seen))) return false;
  await breakStaleLock(lockPath, seen);
  return true;
}

async function isStale(lockPath: string, content: string): Promise<boolean> {
  const holder = lockHolderOf(content);
  if (holder !== undefined) return !holderRuns(holder, holder.token !== undefined && heldTokens.has(holder.token));
  // A holder that died between creating the file and writing its pid leaves it empty or partial.
  const stats = await stat(lockPath).catch(() => undefined);
  return stats !== undefined && Date.now() - stats.mtimeMs > SETTINGS_LOCK_TIMEOUT_MS;
}

async function describeHolder(lockPath: string): Promise<string> {
  const holder = lockHolderOf((await readOrUndefined(lockPath)) ?? "");
  return holder === undefined ? "an unknown holder" : `process ${holder.pid}`;
}

async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function timeoutError(lockPath: string, holder: string): AppError {
  return new AppError("timeout", `settings lock ${lockPath} not acquired within ${SETTINGS_LOCK_TIMEOUT_MS} ms (SETTINGS_LOCK_TIMEOUT_MS); held by ${holder}`, {
    lockFile: lockPath,
  });
}
