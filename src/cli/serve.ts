import { isAbsolute, resolve } from "node:path";
import { Daemon, DaemonLockedError, findRunningDaemon, type ListenTarget } from "../daemon/index.js";
import { MAX_KERNEL_POOL } from "../settings/index.js";
import { homeDir, stateDir } from "../settings/paths.js";
import { stringOption, UsageError, type ParsedArgs } from "./args.js";
import { SANDBOX_OPTION, type CliCommand, type CliIO } from "./command.js";
import { sandboxOf } from "./session.js";

/** Hosts `--listen` accepts: the daemon serves loopback only (D-1). */
const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|::1)$/;
/** Where the daemon listens without --listen or --socket. */
export const DEFAULT_LISTEN_HOST = "127.0.0.1";

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

/** `--pool N`: spare kernels for this run (K-11), 0 to MAX_KERNEL_POOL; undefined when not given. Throws UsageError. */
export function poolOf(args: ParsedArgs): number | undefined {
  const given = stringOption(args, "pool");
  if (given === undefined) return undefined;
  const size = /^\d{1,3}$/.test(given) ? Number(given) : Number.NaN;
  if (!(size <= MAX_KERNEL_POOL)) throw new UsageError(`--pool takes a whole number from 0 to ${MAX_KERNEL_POOL}, got "${given}"`);
  return size;
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

async function serve(args: ParsedArgs, io: CliIO): Promise<number> {
  const target = listenTarget(args, io.cwd);
  const sandbox = sandboxOf(args);
  const pool = poolOf(args);
  const state = stateDir(io.env);
  const running = await findRunningDaemon(state);
  if (running !== undefined) {
    io.stderr.write(`albedo serve: a daemon already runs for ${state} at ${running.info.url} (pid ${running.info.pid})\n`);
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
    log: (level, message, data) => {
      if (level === "warn" || level === "error") io.stderr.write(`albedo serve ${level}: ${message}${data ? ` ${JSON.stringify(data)}` : ""}\n`);
    },
  }).catch((error: unknown) => {
    signal.dispose();
    if (!(error instanceof DaemonLockedError)) throw error;
    // Another `albedo serve` took the state dir between the check above and the lock.
    io.stderr.write(`albedo serve: ${error.message}\n`);
    return undefined;
  });
  if (daemon === undefined) return 1;
  const { abandoned, pending } = daemon.recovery;
  io.stdout.write(`albedo serve: listening on ${daemon.url} (pid ${process.pid}); recovered ${pending} pending and ${abandoned} abandoned turns\n`);
  const received = await signal.wait;
  signal.dispose();
  io.stdout.write(`albedo serve: ${received}, closing sessions\n`);
  await daemon.close();
  return 0;
}

/** `albedo serve`: the HTTP + WebSocket daemon (D-1). */
export const serveCommand: CliCommand = {
  path: ["serve"],
  summary: "run the daemon: HTTP + WebSocket API on loopback or a Unix socket (token in $ALBEDO_HOME/daemon.token)",
  usage: "",
  options: [
    { name: "listen", value: "HOST:PORT", help: "loopback address to listen on (default 127.0.0.1 on a free port)" },
    { name: "socket", value: "PATH", help: "listen on a Unix socket instead of TCP" },
    SANDBOX_OPTION,
    { name: "pool", value: "N", help: `spare kernels kept booted for the workspaces last opened, 0-${MAX_KERNEL_POOL} (default: setting kernel.pool, else 1)` },
  ],
  run: serve,
};
