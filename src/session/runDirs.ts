import { randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { currentProcess, isSameProcessAlive, processIdentityOf, readFileBounded } from "../platform/index.js";

/** The state dir's directory of run dirs. */
export const RUN_BASE_DIR = "run";
/** The file in a run dir naming the process that owns it: `{"pid", "start_time"}`, so a reused pid is not taken for the owner. */
export const RUN_DIR_OWNER_FILE = "owner.pid";
/**
 * Random bytes in a run dir's name. The name is not the session id (which clients and logs see):
 * a kernel that somehow got another session's base dir mounted still could not list it (0700, and
 * the sandbox's uid is the owner, so this is defence in depth) or guess a name in it.
 */
export const RUN_DIR_NAME_BYTES = 12;
/** A run dir with no owner file younger than this may still be being made; older ones are leftovers. */
export const RUN_DIR_GRACE_MS = 60_000;
/** Bytes of an owner file read; a larger one names no owner. */
export const MAX_RUN_DIR_OWNER_BYTES = 4096;
/**
 * The state dir's directory of the RPC ROUTERs' private sockets, one per run dir and named after it:
 * outside every run dir, so no sandbox mounts it (see RpcServer).
 */
export const RPC_PRIVATE_DIR = "rpc";
/** Run dirs examined by one sweep. */
export const MAX_RUN_DIRS_SWEPT = 1024;

/** Makes a session's private run dir (0700, under a 0700 base, with an unguessable name) and records this process as its owner. */
export async function makeRunDir(stateDir: string): Promise<string> {
  const base = join(stateDir, RUN_BASE_DIR);
  await mkdir(base, { recursive: true, mode: 0o700 });
  await chmod(base, 0o700);
  const runDir = join(base, randomBytes(RUN_DIR_NAME_BYTES).toString("base64url"));
  await mkdir(runDir, { mode: 0o700 });
  await writeFile(join(runDir, RUN_DIR_OWNER_FILE), `${JSON.stringify(currentProcess())}\n`, { mode: 0o600, flag: "wx" });
  return runDir;
}

/** Where the RPC ROUTER of the session in `runDir` binds its private socket; makes the directory (0700). */
export async function privateSocketFor(stateDir: string, runDir: string): Promise<string> {
  const dir = join(stateDir, RPC_PRIVATE_DIR);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  return join(dir, basename(runDir));
}

/**
 * Removes run dirs whose owning process is gone (a runtime killed with SIGKILL cannot clean up),
 * so no socket or connection file of a dead session lingers (K-9). Never throws; returns how many
 * it removed.
 */
export async function sweepRunDirs(stateDir: string): Promise<number> {
  const base = join(stateDir, RUN_BASE_DIR);
  const names = await readdir(base).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names.slice(0, MAX_RUN_DIRS_SWEPT)) {
    const dir = join(base, name);
    if (await isAbandoned(dir)) {
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      await rm(join(stateDir, RPC_PRIVATE_DIR, name), { force: true }).catch(() => undefined);
      removed += 1;
    }
  }
  return removed;
}

async function isAbandoned(dir: string): Promise<boolean> {
  const owner = await readOwner(join(dir, RUN_DIR_OWNER_FILE));
  if (owner === undefined) {
    const info = await stat(dir).catch(() => undefined);
    return info !== undefined && info.isDirectory() && Date.now() - info.mtimeMs > RUN_DIR_GRACE_MS;
  }
  const identity = processIdentityOf(parseOwner(owner));
  return identity === undefined || !isSameProcessAlive(identity);
}

/**
 * The owner file's text, or undefined when there is none to read. The kernel can write its run dir,
 * so the file may have been replaced by a FIFO: it is opened without blocking and read only when
 * it is a regular file, or the next session's open would wait on it forever.
 */
async function readOwner(file: string): Promise<string | undefined> {
  const found = await readFileBounded(file, MAX_RUN_DIR_OWNER_BYTES).catch(() => undefined);
  return found?.kind === "file" ? found.bytes.toString("utf8") : undefined;
}

/** The owner file's record: JSON, or a bare pid as older runtimes wrote it. */
function parseOwner(text: string): unknown {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "number" ? { pid: value } : value;
  } catch {
    return undefined;
  }
}
