import { randomBytes } from "node:crypto";
import { mkdir, open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { isProcessAlive } from "./process.js";

/** Mode of a private file (every file albedo keeps in its state dir): the user's alone. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Replaces `file` with `text` so that a reader (or a crash at any instant) sees either the old or
 * the new complete content: a temp file of mode `mode` (default PRIVATE_FILE_MODE) in the same
 * directory, fsync, rename, fsync the directory. Creates the directory if missing. Throws the fs
 * error (its `path` naming `file` when the call did not); the target is then unchanged.
 */
export async function writeFileAtomic(file: string, text: string | Uint8Array, mode: number = PRIVATE_FILE_MODE): Promise<void> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `${tempPrefix(file)}${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "wx", mode);
    try {
      // The umask may have narrowed the mode given to open; the file must have exactly `mode`.
      await handle.chmod(mode);
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    // A FileHandle's errors do not say which file; whoever answers a full disk should.
    if (error instanceof Error && (error as NodeJS.ErrnoException).path === undefined) (error as NodeJS.ErrnoException).path = file;
    throw error;
  }
  await syncDirectory(dir);
}

/**
 * Deletes temp files a killed writer left beside `file` (their pid is dead). Call only while
 * holding a lock on `file`, so no live writer's temp file is in flight under a dead pid.
 */
export async function removeOrphanTemps(file: string): Promise<number> {
  const prefix = tempPrefix(file);
  const names = await readdir(dirname(file)).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
    const pid = Number(name.slice(prefix.length).split(".")[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || isProcessAlive(pid)) continue;
    await unlink(join(dirname(file), name)).catch(() => undefined);
    removed += 1;
  }
  return removed;
}

function tempPrefix(file: string): string {
  return `.${basename(file)}.`;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch (error) {
    // Some filesystems cannot fsync a directory; the rename itself already happened.
    if ((error as NodeJS.ErrnoException).code !== "EINVAL") throw error;
  } finally {
    await handle.close();
  }
}

