import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { sessionDirs } from "../../session/fixtures.js";
import { installDir } from "../../../src/platform/index.js";
import { poll } from "../../support/poll.js";

/** The checkout, found the same way from the sources and from dist/ (the bench runs these helpers compiled). */
export const ROOT = installDir();
export const BIN = join(ROOT, "bin", "albedo");
/** Liveness bound for every wait in the daemon tests: far above the expected time. */
export const WAIT_MS = 30_000;

/** Temp workspace, home and state dir; short names because kernel sockets live under the state dir. */
export interface Dirs {
  readonly root: string;
  readonly workspace: string;
  readonly home: string;
  readonly state: string;
  cleanup(): Promise<void>;
}

export async function makeDirs(): Promise<Dirs> {
  const dirs = await sessionDirs();
  return { root: dirs.root, workspace: dirs.workspace, home: dirs.home, state: dirs.stateDir, cleanup: dirs.cleanup };
}

export function envFor(dirs: Dirs): NodeJS.ProcessEnv {
  return { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.state };
}

/** A running `albedo serve` process. */
export interface DaemonProcess {
  readonly process: ChildProcess;
  readonly url: string;
  readonly token: string;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Signals that end a daemon only when it crashed or the machine killed it (tests stop it with SIGTERM or SIGKILL). */
const CRASH_SIGNALS: ReadonlySet<NodeJS.Signals> = new Set(["SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"]);
/** How much of a crashed daemon's stderr the run's log shows. */
const CRASH_STDERR_CHARS = 4000;

/**
 * Spawns `albedo serve` (default --listen 127.0.0.1:0) and waits for its "listening" line; `env` adds to envFor(dirs).
 * `wrap` runs it through another program, e.g. ["sh", "-c", 'umask 000; exec "$0" "$@"'].
 */
export async function startDaemon(
  dirs: Dirs,
  args: readonly string[] = ["--listen", "127.0.0.1:0"],
  env: NodeJS.ProcessEnv = {},
  wrap: readonly string[] = [],
): Promise<DaemonProcess> {
  const argv = [...wrap, process.execPath, BIN, "serve", ...args];
  const child = spawn(argv[0]!, argv.slice(1), { env: { ...envFor(dirs), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  let gone = false;
  void exited.then(({ code, signal }) => {
    gone = true;
    // A daemon that crashed (not stopped by its test) says so where the run's log shows it, with how its stderr ended.
    // (An exit code is an outcome some tests ask for; these signals never are.)
    if (code === null && signal !== null && CRASH_SIGNALS.has(signal)) {
      process.stderr.write(`albedo serve (pid ${child.pid}) ended with ${signal}; the end of its stderr:\n${err.slice(-CRASH_STDERR_CHARS)}\n`);
    }
  });
  await poll(() => {
    if (gone) throw new Error(`albedo serve exited early: ${err}${out}`);
    return /listening on (\S+)/.test(out);
  }, { what: "the daemon to listen" });
  const url = /listening on (\S+)/.exec(out)![1]!;
  const token = readFileSync(join(dirs.state, "daemon.token"), "utf8").trim();
  return { process: child, url, token, stdout: () => out, stderr: () => err, exited };
}

/** SIGKILLs the daemon if it still runs and waits until it is reaped. */
export async function killDaemon(daemon: DaemonProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (daemon.process.exitCode === null && daemon.process.signalCode === null) daemon.process.kill(signal);
  await daemon.exited;
}

/** A parsed answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  // Test code reads fields freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any;
}

/** One request with the daemon's token (unless headers override it); a string body is sent as is. */
export async function call(daemon: Pick<DaemonProcess, "url" | "token">, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const hasBody = body !== undefined;
  const res = await fetch(daemon.url + path, {
    method,
    headers: { authorization: `Bearer ${daemon.token}`, ...(hasBody ? { "content-type": "application/json" } : {}), ...headers },
    ...(hasBody ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** The turn of an admitted operation once it has ended (neither pending nor running). */
export async function outcomeOf(daemon: DaemonProcess, operationId: string): Promise<Record<string, unknown>> {
  let turn: Record<string, unknown> | undefined;
  await poll(async () => {
    turn = (await call(daemon, "GET", `/operations/${operationId}`)).body.turn;
    return turn?.state !== "pending" && turn?.state !== "running";
  }, { what: `operation ${operationId} to end` });
  return turn!;
}

/** A stream client collecting every event. */
export interface StreamClient {
  readonly events: Record<string, unknown>[];
  readonly ws: WebSocket;
  close(): Promise<void>;
}

export async function openStream(daemon: Pick<DaemonProcess, "url" | "token">, sessionId: string, via: "header" | "query" = "header"): Promise<StreamClient> {
  const base = `${daemon.url.replace(/^http/, "ws")}/sessions/${sessionId}/stream`;
  const ws = via === "header" ? new WebSocket(base, { headers: { authorization: `Bearer ${daemon.token}` } }) : new WebSocket(`${base}?token=${daemon.token}`);
  const events: Record<string, unknown>[] = [];
  ws.on("message", (data) => events.push(JSON.parse(String(data)) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  return {
    events,
    ws,
    close: async () => {
      if (ws.readyState !== WebSocket.CLOSED) ws.close();
      await closed;
    },
  };
}
