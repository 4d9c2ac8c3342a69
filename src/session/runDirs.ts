import { readdir, readFile, rm, stat, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { isProcessAlive } from "../settings/index.js";

/** The file in a run dir naming the process that owns it. */
export const RUN_DIR_OWNER_FILE = "owner.pid";
/** A run dir with no owner file younger than this may still be being made; older ones are leftovers. */
export const RUN_DIR_GRACE_MS = 60_000;
/** Run dirs examined by one sweep. */
export const MAX_RUN_DIRS_SWEPT = 1024;

/** Makes the session's private run dir (0700) and records this process as its owner. */
export async function makeRunDir(stateDir: string, id: string): Promise<string> {
  const runDir = join(stateDir, "run", id);
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  await writeFile(join(runDir, RUN_DIR_OWNER_FILE), `${process.pid}\n`, { mode: 0o600 });
  return runDir;
}

/**
 * Removes run dirs whose owning process is gone (a runtime killed with SIGKILL cannot clean up),
 * so no socket or connection file of a dead session lingers (K-9). Never throws; returns how many
 * it removed.
 */
export async function sweepRunDirs(stateDir: string): Promise<number> {
  const base = join(stateDir, "run");
  const names = await readdir(base).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names.slice(0, MAX_RUN_DIRS_SWEPT)) {
    const dir = join(base, name);
    if (await isAbandoned(dir)) {
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      removed += 1;
    }
  }
  return removed;
}

async function isAbandoned(dir: string): Promise<boolean> {
  const owner = await readFile(join(dir, RUN_DIR_OWNER_FILE), "utf8").catch(() => undefined);
  if (owner === undefined) {
    const info = await stat(dir).catch(() => undefined);
    return info !== undefined && info.isDirectory() && Date.now() - info.mtimeMs > RUN_DIR_GRACE_MS;
  }
  const pid = Number(owner.trim());
  return !Number.isSafeInteger(pid) || pid <= 0 || !isProcessAlive(pid);
}
