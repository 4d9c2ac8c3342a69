import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";

/** File in the state dir naming the running daemon: `{"url", "pid"}`. */
export const DAEMON_INFO_FILE = "daemon.json";
/** File in the state dir holding the bearer token (mode 0600). */
export const DAEMON_TOKEN_FILE = "daemon.token";
/** The operations database in the state dir (O-1). */
export const DAEMON_DB_FILE = "albedo.db";
/** Bytes read from daemon.json or daemon.token; they are tiny, a larger file is not ours. */
export const MAX_DAEMON_FILE_BYTES = 4096;

/** What daemon.json says about a daemon. `socket` is set when it listens on a Unix socket. */
export interface DaemonInfo {
  readonly url: string;
  readonly pid: number;
  readonly socket?: string;
}

/** Writes `text` to `file` with mode 0600 through a temp file and rename, so readers never see half of it. */
async function writePrivate(file: string, text: string): Promise<void> {
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  const handle = await open(temp, "wx", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
}

/** Creates the state dir (0700) and writes the token file; returns nothing, throws on I/O errors. */
export async function writeToken(stateDir: string, token: string): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writePrivate(join(stateDir, DAEMON_TOKEN_FILE), `${token}\n`);
}

/** Writes daemon.json once the server listens. */
export async function writeDaemonInfo(stateDir: string, info: DaemonInfo): Promise<void> {
  await writePrivate(join(stateDir, DAEMON_INFO_FILE), `${JSON.stringify(info)}\n`);
}

/** Removes daemon.json (a clean exit); absence is fine. */
export async function removeDaemonInfo(stateDir: string): Promise<void> {
  await rm(join(stateDir, DAEMON_INFO_FILE), { force: true });
}

/** daemon.json as written, or undefined when it is missing or not ours. Says nothing about liveness. */
export async function readDaemonInfo(stateDir: string): Promise<DaemonInfo | undefined> {
  const text = await readSmall(join(stateDir, DAEMON_INFO_FILE));
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<DaemonInfo>;
    if (typeof value.url !== "string" || !Number.isInteger(value.pid)) return undefined;
    return { url: value.url, pid: value.pid!, ...(typeof value.socket === "string" ? { socket: value.socket } : {}) };
  } catch {
    return undefined;
  }
}

/** The token from daemon.token, or undefined when there is none. */
export async function readToken(stateDir: string): Promise<string | undefined> {
  const text = (await readSmall(join(stateDir, DAEMON_TOKEN_FILE)))?.trim();
  return text ? text : undefined;
}

async function readSmall(file: string): Promise<string | undefined> {
  try {
    const text = await readFile(file, "utf8");
    return text.length > MAX_DAEMON_FILE_BYTES ? undefined : text;
  } catch {
    return undefined;
  }
}

/** Whether a process with this id exists (EPERM still means it exists). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
