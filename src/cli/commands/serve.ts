import { isAbsolute, resolve } from "node:path";
import type { RequestEntry } from "../../daemon/index.js";
import { join } from "node:path";
import { DAEMON_TOKEN_FILE, findRunningDaemon, type DaemonInfo } from "../../api/index.js";
import { Daemon, DaemonLockedError, DaemonLog, LOG_ROTATIONS_KEPT, MAX_LOG_FILE_BYTES, MAX_MCP_IDLE_S, MAX_SESSIONS, MCP_IDLE_TIMEOUT_MS, type ListenTarget } from "../../daemon/index.js";
import type { SandboxMode } from "../../sandbox/index.js";
import { MAX_KERNEL_POOL, MAX_SESSIONS_LIMIT } from "../../settings/index.js";
import { stringOption, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { SANDBOX_OPTION, type CliCommand, type CliIO } from "../plumbing/command.js";
import { sandboxOf } from "../plumbing/session.js";
import { homeDir, stateDir } from "../../platform/index.js";

/** Hosts `--listen` accepts: the daemon serves loopback only (D-1). */
const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|::1)$/;
/** Where the daemon listens without --listen or --socket. */
export const DEFAULT_LISTEN_HOST = "127.0.0.1";
/** How long a daemon started on demand (a notebook's launcher, a settings command) runs without sessions before it exits. */
export const ON_DEMAND_IDLE_EXIT_MS = 15 * 60_000;
/** How often an idle daemon looks at its session count. */
export const IDLE_CHECK_MS = 1_000;
/** Longest --idle-exit accepted, in seconds (a week). */
export const MAX_IDLE_EXIT_S = 7 * 24 * 3600;

/** The idle period asked for: --idle-exit SECONDS, --on-demand's ON_DEMAND_IDLE_EXIT_MS, or none. Throws UsageError. */
export function idleExitOf(args: ParsedArgs): number | undefined {
  const given = stringOption(args, "idle-exit");
  if (given !== undefined && args.options.has("on-demand")) throw new UsageError("give --idle-exit or --on-demand, not both");
  if (args.options.has("on-demand")) return ON_DEMAND_IDLE_EXIT_MS;
  if (given === undefined) return undefined;
  const seconds = /^\d{1,7}$/.test(given) ? Number(given) : Number.NaN;
  if (!(seconds >= 1 && seconds <= MAX_IDLE_EXIT_S)) throw new UsageError(`--idle-exit takes whole seconds from 1 to ${MAX_IDLE_EXIT_S}, got "${given}"`);
  return seconds * 1000;
}

/** Resolves once the daemon has had no session for `periodMs`; `dispose` stops watching. */
function idleExit(daemon: Daemon, periodMs: number): { wait: Promise<string>; dispose(): void } {
  let idleSince = Date.now();
  let fire!: (why: string) => void;
  const wait = new Promise<string>((resolve) => (fire = resolve));
  const timer = setInterval(() => {
    if (daemon.activeSessions > 0) idleSince = Date.now();
    else if (Date.now() - idleSince >= periodMs) fire(`no sessions for ${formatPeriod(periodMs)}`);
  }, IDLE_CHECK_MS);
  return { wait, dispose: () => clearInterval(timer) };
}

/** "15 min", "90 s". */
export function formatPeriod(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

/** Where the token is and one request that works, for the person who just started a daemon. */
function firstSteps(info: DaemonInfo, state: string): string {
  const token = join(state, DAEMON_TOKEN_FILE);
  const auth = `-H "Authorization: Bearer $(cat ${token})"`;
  const request = info.socket ? `curl --unix-socket ${info.socket} ${auth} http://localhost/health` : `curl ${auth} ${info.url}/health`;
  return `the bearer token is in ${token} (mode 0600); try:\n  ${request}\n`;
}

/** The listen target from the options; throws UsageError for a bad or non-loopback address. */
export function listenTarget(args: ParsedArgs, cwd: string): ListenTarget {
  const listen = stringOption(args, "listen");
  const socket = stringOption(args, "socket");
  if (listen !== undefined && socket !== undefined) throw new UsageError("give --listen or --socket, not both");
  if (socket !== undefined) return { socket: isAbsolute(socket) ? socket : resolve(cwd, socket) };
  if (listen === undefined) return { host: DEFAULT_LISTEN_HOST, port: 0 };
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!match || host === undefined || port > 65535) throw new UsageError(`--listen takes HOST:PORT (e.g. 127.0.0.1:0), got ${listen}`);
  if (!LOOPBACK.test(host)) throw new UsageError(`--listen must name a loopback host (127.0.0.1, ::1, localhost), got ${host}`);
  return { host, port };
}

/** `--NAME N` as a whole number from `min` to `max`; undefined when not given. Throws UsageError. */
function wholeNumberOf(args: ParsedArgs, name: string, min: number, max: number): number | undefined {
  const given = stringOption(args, name);
  if (given === undefined) return undefined;
  const value = /^\d{1,4}$/.test(given) ? Number(given) : Number.NaN;
  if (!(value >= min && value <= max)) throw new UsageError(`--${name} takes a whole number from ${min} to ${max}, got "${given}"`);
  return value;
}

/** `--mcp-idle SECONDS`: how long an MCP session on /mcp may idle, 1 to MAX_MCP_IDLE_S, in ms; undefined when not given. Throws UsageError. */
export function mcpIdleOf(args: ParsedArgs): number | undefined {
  const given = stringOption(args, "mcp-idle");
  if (given === undefined) return undefined;
  const seconds = /^\d{1,7}$/.test(given) ? Number(given) : Number.NaN;
  if (!(seconds >= 1 && seconds <= MAX_MCP_IDLE_S)) throw new UsageError(`--mcp-idle takes whole seconds from 1 to ${MAX_MCP_IDLE_S}, got "${given}"`);
  return seconds * 1000;
}

/** `--pool N`: spare kernels for this run (K-11), 0 to MAX_KERNEL_POOL; undefined when not given. Throws UsageError. */
export function poolOf(args: ParsedArgs): number | undefined {
  return wholeNumberOf(args, "pool", 0, MAX_KERNEL_POOL);
}

/** `--max-sessions N`: the session cap for this run, 1 to MAX_SESSIONS_LIMIT; undefined when not given. Throws UsageError. */
export function maxSessionsOf(args: ParsedArgs): number | undefined {
  return wholeNumberOf(args, "max-sessions", 1, MAX_SESSIONS_LIMIT);
}

/** Resolves on the first SIGTERM or SIGINT. */
function stopSignal(): { wait: Promise<string>; dispose(): void } {
  let fire!: (signal: string) => void;
  const wait = new Promise<string>((resolve) => (fire = resolve));
  const onTerm = () => fire("SIGTERM");
  const onInt = () => fire("SIGINT");
  process.once("SIGTERM", onTerm);
  process.once("SIGINT", onInt);
  return { wait, dispose: () => (process.off("SIGTERM", onTerm), process.off("SIGINT", onInt)) };
}

/** `--log-file PATH`, absolute; undefined when not given. */
export function logFileOf(args: ParsedArgs, cwd: string): string | undefined {
  const given = stringOption(args, "log-file");
  if (given === undefined) return undefined;
  if (given === "") throw new UsageError("--log-file takes a path");
  return isAbsolute(given) ? given : resolve(cwd, given);
}

async function serve(args: ParsedArgs, io: CliIO): Promise<number> {
  const target = listenTarget(args, io.cwd);
  const sandbox = sandboxOf(args);
  const pool = poolOf(args);
  const maxSessions = maxSessionsOf(args);
  const file = logFileOf(args, io.cwd);
  const log = new DaemonLog({ stream: io.stderr, ...(file !== undefined ? { file } : {}) });
  // A reader that went away or a full disk must not end the daemon and every session with it.
  log.guard(io.stdout);
  log.guard(io.stderr);
  // stderr also gets these (from Node, or from main); the file needs them when no one reads stderr.
  const logUncaught = (error: Error) => log.writesFile && log.log("error", `uncaught exception: ${error.stack ?? error.message}`);
  process.on("uncaughtExceptionMonitor", logUncaught);
  try {
    const mcpIdleMs = mcpIdleOf(args);
    return await serveWith({ target, sandbox, pool, maxSessions, mcpIdleMs, state: stateDir(io.env), log, io, idleMs: idleExitOf(args), verbose: args.options.has("verbose") });
  } catch (error) {
    if (log.writesFile) log.log("error", `albedo serve: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  } finally {
    process.off("uncaughtExceptionMonitor", logUncaught);
    log.close();
  }
}

interface ServeParts {
  readonly target: ListenTarget;
  readonly sandbox: SandboxMode | undefined;
  readonly pool: number | undefined;
  readonly maxSessions: number | undefined;
  readonly mcpIdleMs: number | undefined;
  readonly state: string;
  readonly log: DaemonLog;
  readonly io: CliIO;
  readonly idleMs: number | undefined;
  readonly verbose: boolean;
}

async function serveWith({ target, sandbox, pool, maxSessions, mcpIdleMs, state, log, io, idleMs, verbose }: ServeParts): Promise<number> {
  const tell = (stream: NodeJS.WritableStream, level: "info" | "error", text: string) => {
    log.print(stream, `albedo serve: ${text}\n`);
    if (log.writesFile) log.log(level, text);
  };
  const running = await findRunningDaemon(state);
  if (running !== undefined) {
    tell(io.stderr, "error", `a daemon already runs for ${state} at ${running.info.url} (pid ${running.info.pid})`);
    return 1;
  }
  const signal = stopSignal();
  const daemon = await Daemon.start({
    stateDir: state,
    home: homeDir(io.env),
    env: io.env,
    listen: target,
    ...(sandbox ? { sandbox } : {}),
    ...(pool !== undefined ? { pool } : {}),
    ...(maxSessions !== undefined ? { maxSessions } : {}),
    ...(mcpIdleMs !== undefined ? { mcpIdleMs } : {}),
    log: log.log,
    logStats: () => log.stats(),
    // The path alone, never a query or a header: neither the token nor a request body reaches the log.
    ...(verbose ? { onRequest: (r: RequestEntry) => tell(io.stderr, "info", `${r.method} ${r.path} ${r.status} ${r.ms} ms`) } : {}),
  }).catch((error: unknown) => {
    signal.dispose();
    if (!(error instanceof DaemonLockedError)) throw error;
    // Another `albedo serve` took the state dir between the check above and the lock.
    tell(io.stderr, "error", error.message);
    return undefined;
  });
  if (daemon === undefined) return 1;
  const { recovery } = daemon;
  tell(io.stdout, "info", `listening on ${daemon.url} (pid ${process.pid}); abandoned ${recovery.running} running and ${recovery.queued} queued turns of the sessions before the restart`);
  log.print(io.stdout, `albedo serve: ${firstSteps(daemon.info, state)}`);
  if (idleMs !== undefined) tell(io.stdout, "info", `exits after ${formatPeriod(idleMs)} without sessions`);
  const idle = idleMs === undefined ? undefined : idleExit(daemon, idleMs);
  const received = await Promise.race([signal.wait, ...(idle ? [idle.wait] : [])]);
  signal.dispose();
  idle?.dispose();
  tell(io.stdout, "info", `${received}, closing sessions`);
  await daemon.close();
  return 0;
}

/** `albedo serve`: the HTTP + WebSocket daemon (D-1). */
export const serveCommand: CliCommand = {
  options: [
    { name: "listen", value: "HOST:PORT", help: "loopback address to listen on (default 127.0.0.1 on a free port)" },
    { name: "socket", value: "PATH", help: "listen on a Unix socket instead of TCP" },
    SANDBOX_OPTION,
    { name: "pool", value: "N", help: `spare kernels kept booted for the workspaces last opened, 0-${MAX_KERNEL_POOL} (default: setting kernel.pool, else 1)` },
    { name: "idle-exit", value: "SECONDS", help: "exit after SECONDS with no sessions" },
    { name: "on-demand", help: `started by a notebook or a command, not a person: exit after ${formatPeriod(ON_DEMAND_IDLE_EXIT_MS)} with no sessions` },
    { name: "verbose", short: "v", help: "log each request: method, path, status, time (never the token)" },
    { name: "mcp-idle", value: "SECONDS", help: `close an MCP client's session on /mcp after SECONDS with no request and no open stream (default ${MCP_IDLE_TIMEOUT_MS / 1000})` },
    { name: "max-sessions", value: "N", help: `most sessions open at once, 1-${MAX_SESSIONS_LIMIT} (default: setting daemon.max_sessions, else ${MAX_SESSIONS})` },
    {
      name: "log-file",
      value: "PATH",
      help: `append the log here, rotated at ${MAX_LOG_FILE_BYTES / 1024 / 1024} MiB keeping ${LOG_ROTATIONS_KEPT} old files (default: warnings and errors to stderr)`,
    },
  ],
  async run(args, io) {
    const code = await serve(args, io);
    // Closed means done: a model server's retry wait or a remote server's trickling answer must
    // not keep the process alive once its lock is released and another daemon may start.
    io.exit?.(code);
    return code;
  },
};
