/** `albedo daemon status|stop`: the daemon for the state dir, as a person asks about it. */
import { API, findRunningDaemon, type DaemonClient } from "../../api/index.js";
import { SHUTDOWN_TIMEOUT_MS } from "../../daemon/index.js";
import { hangingRow } from "../../text/index.js";
import { JSON_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { startProgress } from "../terminal/progress.js";
import { isSameProcessAlive, stateDir } from "../../platform/index.js";

/** How long `stop` waits for the daemon to exit: its own shutdown bound and some. */
export const DAEMON_STOP_TIMEOUT_MS = SHUTDOWN_TIMEOUT_MS + 10_000;
/** Exit status of `status` when no daemon runs (as `pgrep` finds nothing). */
export const EXIT_NOT_RUNNING = 1;
const STOP_POLL_MS = 100;

/** "2 h 5 min", "3 min 4 s", "12 s". */
export function formatUptime(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  if (h > 0) return `${h} h ${m} min`;
  return m > 0 ? `${m} min ${sec} s` : `${sec} s`;
}

function notRunning(io: CliIO): string {
  return `no daemon runs for ${stateDir(io.env)} (notebooks and settings commands start one; \`albedo serve\` runs one here)\n`;
}

async function status(daemon: DaemonClient): Promise<Record<string, unknown>> {
  const health = await daemon.call(API.health);
  const started = Date.parse(health.started_at);
  return {
    running: true,
    pid: daemon.info.pid,
    url: daemon.info.url,
    sessions: health.sessions,
    spare_kernels: health.spares.length,
    started_at: health.started_at,
    uptime_s: Math.round((Date.now() - started) / 1000),
  };
}

export const daemonStatus: CliCommand = {
  options: [JSON_OPTION],
  async run(args, io) {
    const daemon = await findRunningDaemon(stateDir(io.env));
    if (daemon === undefined) {
      if (args.options.has("json")) writeJson(io, { running: false, state_dir: stateDir(io.env) });
      else io.stdout.write(notRunning(io));
      return EXIT_NOT_RUNNING;
    }
    const found = await status(daemon);
    if (args.options.has("json")) {
      writeJson(io, found);
      return 0;
    }
    const rows: [string, string][] = [
      ["daemon", `running at ${found.url}`],
      ["pid", String(found.pid)],
      ["sessions", String(found.sessions ?? "?")],
      ["spare kernels", String(found.spare_kernels ?? "?")],
      ["uptime", typeof found.uptime_s === "number" ? formatUptime(found.uptime_s * 1000) : "?"],
      ["state dir", stateDir(io.env)],
    ];
    io.stdout.write(`${rows.flatMap(([k, v]) => hangingRow(`${k}  `, v, 16)).join("\n")}\n`);
    return 0;
  },
};

export const daemonStop: CliCommand = {
  options: [],
  async run(_args, io) {
    const daemon = await findRunningDaemon(stateDir(io.env));
    if (daemon === undefined) {
      io.stdout.write(notRunning(io));
      return 0;
    }
    const { info } = daemon;
    process.kill(info.pid, "SIGTERM");
    const done = startProgress(io.stderr, `albedo daemon stop: closing the daemon's sessions (pid ${info.pid})`);
    const deadline = Date.now() + DAEMON_STOP_TIMEOUT_MS;
    try {
      while (isSameProcessAlive(info)) {
        if (Date.now() > deadline) {
          io.stderr.write(`albedo daemon stop: pid ${info.pid} still runs after ${DAEMON_STOP_TIMEOUT_MS / 1000} s (DAEMON_STOP_TIMEOUT_MS); \`kill -9 ${info.pid}\` ends it\n`);
          return 1;
        }
        await new Promise((resolve) => setTimeout(resolve, STOP_POLL_MS));
      }
    } finally {
      done();
    }
    io.stdout.write(`stopped the daemon at ${info.url} (pid ${info.pid})\n`);
    return 0;
  },
};
