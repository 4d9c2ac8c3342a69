import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "../errors/index.js";
import { Mutex } from "./mutex.js";
import { clearPidLock, tryLockFile, type FileLock } from "../platform/index.js";

/** How long a settings writer waits for the state dir's lock before giving up. */
export const SETTINGS_LOCK_TIMEOUT_MS = 10_000;
/** Pause between two attempts at a lock another process holds. */
export const SETTINGS_LOCK_RETRY_MS = 5;
/** Name of the cross-process lock file inside the state dir. */
export const SETTINGS_LOCK_FILE = "settings.lock";

const mutexes = new Map<string, Mutex>();

/**
 * Runs `fn` holding the state dir's settings lock: an in-process mutex, then the kernel's lock on
 * settings.lock (tryLockFile), which goes with its holder however it ends and holds across pid
 * namespaces; a pid lock an earlier albedo left there counts while the process it names runs.
 * Throws AppError "timeout" when the lock is not had within SETTINGS_LOCK_TIMEOUT_MS; otherwise
 * returns or throws what `fn` does.
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
    const lock = await acquireLock(lockPath, deadline);
    try {
      return await fn();
    } finally {
      lock.release();
    }
  } finally {
    mutex.release();
    if (mutex.idle) mutexes.delete(dir);
  }
}

/** Tries the lock every SETTINGS_LOCK_RETRY_MS until it is had or `deadline` passes; never blocks the event loop. */
async function acquireLock(lockPath: string, deadline: number): Promise<FileLock> {
  for (;;) {
    const earlier = await clearPidLock(lockPath);
    const lock = earlier === undefined ? tryLockFile(lockPath) : undefined;
    if (lock !== undefined) return lock;
    if (Date.now() >= deadline) throw timeoutError(lockPath, earlier === undefined ? "another process" : `process ${earlier.pid}`);
    await sleep(SETTINGS_LOCK_RETRY_MS);
  }
}

function timeoutError(lockPath: string, holder: string): AppError {
  return new AppError("timeout", `settings lock ${lockPath} not acquired within ${SETTINGS_LOCK_TIMEOUT_MS} ms (SETTINGS_LOCK_TIMEOUT_MS); held by ${holder}`, {
    lockFile: lockPath,
  });
}
