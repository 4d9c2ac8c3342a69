import { chmod, lstat, mkdir, opendir, rm } from "node:fs/promises";
import { join } from "node:path";
import { DAEMON_INFO_FILE, DAEMON_TOKEN_FILE, readDaemonInfo, type DaemonInfo } from "../api/index.js";
import { MAX_STATE_DIR_ENTRIES } from "./limits.js";
import { clearPidLock, PRIVATE_FILE_MODE, tryLockFile, writeFileAtomic } from "../platform/index.js";

/** The operations database in the state dir (O-1). */
export const DAEMON_DB_FILE = "albedo.db";
/** File in the state dir that the running daemon holds a kernel lock on, for its life; it stays, empty, when the daemon ends. */
export const DAEMON_LOCK_FILE = "daemon.lock";
/** Mode of the state dir and of every directory albedo makes in it. */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates the state dir if needed and makes it private whoever made it and whatever the umask:
 * the dir 0700, each file directly in it 0600, each directory 0700 (symlinks are left alone: chmod
 * would follow them). Looks at no more than MAX_STATE_DIR_ENTRIES entries and does not descend:
 * what albedo writes lower down it creates private. Throws when the state dir itself cannot be
 * made private (it belongs to another user, say).
 */
export async function makeStateDirPrivate(stateDir: string): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  try {
    await chmod(stateDir, PRIVATE_DIR_MODE);
  } catch (error) {
    throw new Error(`cannot make the state dir ${stateDir} private (mode 0700): ${(error as Error).message}`, { cause: error });
  }
  const dir = await opendir(stateDir);
  let seen = 0;
  for await (const entry of dir) {
    if (++seen > MAX_STATE_DIR_ENTRIES) break;
    await tighten(join(stateDir, entry.name));
  }
}

/** Sets one entry's mode; an entry that vanished or cannot be changed is left (the dir above is private already). */
async function tighten(path: string): Promise<void> {
  const found = await lstat(path).catch(() => undefined);
  if (found === undefined || found.isSymbolicLink()) return;
  const mode = found.isDirectory() ? PRIVATE_DIR_MODE : found.isFile() ? PRIVATE_FILE_MODE : undefined;
  if (mode !== undefined && (found.mode & 0o777) !== mode) await chmod(path, mode).catch(() => undefined);
}

/** Creates the state dir (0700) and writes the token file; returns nothing, throws on I/O errors. */
export async function writeToken(stateDir: string, token: string): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await writeFileAtomic(join(stateDir, DAEMON_TOKEN_FILE), `${token}\n`);
}

/** Writes daemon.json once the server listens. */
export async function writeDaemonInfo(stateDir: string, info: DaemonInfo): Promise<void> {
  await writeFileAtomic(join(stateDir, DAEMON_INFO_FILE), `${JSON.stringify(info)}\n`);
}

/** Removes daemon.json (a clean exit); absence is fine. */
export async function removeDaemonInfo(stateDir: string): Promise<void> {
  await rm(join(stateDir, DAEMON_INFO_FILE), { force: true });
}

/** Thrown when another live process holds the state dir's daemon.lock. */
export class DaemonLockedError extends Error {
  override readonly name = "DaemonLockedError";
  constructor(
    readonly lockFile: string,
    /** What daemon.json, or an earlier albedo's pid lock, says of the holder; its pid is as the holder's own pid namespace sees it. */
    readonly holder: { readonly pid: number; readonly url?: string } | undefined,
  ) {
    super(`a daemon already runs for this state dir: ${lockFile} is held by ${describeHolder(holder)}; stop that daemon first, or give this one another state dir (ALBEDO_HOME)`);
  }
}

function describeHolder(holder: DaemonLockedError["holder"]): string {
  if (holder === undefined) return "a running process (no daemon.json names it yet)";
  return holder.url === undefined ? `pid ${holder.pid}` : `a running process; daemon.json names ${holder.url}, pid ${holder.pid} (as its own pid namespace numbers it)`;
}

/**
 * Takes `<stateDir>/daemon.lock` for this process's life and returns its release. The lock is
 * the kernel's (tryLockFile): it goes when its holder ends, kill -9 included, and a daemon in
 * another pid namespace sees it held all the same. A pid lock an earlier albedo left there still
 * counts while the process it names runs. Throws DaemonLockedError while another daemon holds it.
 */
export async function takeDaemonLock(stateDir: string): Promise<() => Promise<void>> {
  await mkdir(stateDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const lockFile = join(stateDir, DAEMON_LOCK_FILE);
  const earlier = await clearPidLock(lockFile);
  if (earlier !== undefined) throw new DaemonLockedError(lockFile, earlier);
  const lock = tryLockFile(lockFile);
  if (lock === undefined) throw new DaemonLockedError(lockFile, await readDaemonInfo(stateDir));
  return async () => lock.release();
}
