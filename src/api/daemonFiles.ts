/**
 * How a client finds a running daemon: the files it writes in the state dir, and what they say.
 * The daemon writes them (its state.ts); the CLI's client reads them here, and the notebook
 * launcher reads the same names from the generated Python contract.
 */
import { join } from "node:path";
import { readFileBounded, type ProcessIdentity } from "../platform/index.js";
import { MAX_DAEMON_FILE_BYTES } from "./limits.js";

/** File in the state dir naming the running daemon: `{"url", "pid", "start_time"}`. */
export const DAEMON_INFO_FILE = "daemon.json";
/** File in the state dir holding the bearer token (mode 0600). */
export const DAEMON_TOKEN_FILE = "daemon.token";
/** The log a daemon started on demand writes, in the state dir (the same file a notebook's launcher gives it). */
export const ON_DEMAND_LOG_FILE = "daemon.log";

/** What daemon.json says about a daemon: its process, its URL, and `socket` when it listens on a Unix socket. */
export interface DaemonInfo extends ProcessIdentity {
  readonly url: string;
  readonly socket?: string;
}

/** daemon.json as written, or undefined when it is missing or not ours. Says nothing about liveness. */
export async function readDaemonInfo(stateDir: string): Promise<DaemonInfo | undefined> {
  const text = await readSmall(join(stateDir, DAEMON_INFO_FILE));
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<DaemonInfo>;
    if (typeof value.url !== "string" || !Number.isInteger(value.pid)) return undefined;
    return {
      url: value.url,
      pid: value.pid!,
      ...(typeof value.start_time === "string" ? { start_time: value.start_time } : {}),
      ...(typeof value.socket === "string" ? { socket: value.socket } : {}),
    };
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
  const found = await readFileBounded(file, MAX_DAEMON_FILE_BYTES).catch(() => undefined);
  return found?.kind === "file" ? found.bytes.toString("utf8") : undefined;
}
