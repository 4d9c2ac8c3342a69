/**
 * The daemon a command needs (D-4: settings are written by the daemon alone): the one running for
 * the state dir, or one started for the call. A started daemon runs `--on-demand`, so it exits by
 * itself once nothing has used it for ON_DEMAND_IDLE_EXIT_MS; its output goes to its own log.
 */
import { spawn } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { DaemonClient, findRunningDaemon, DAEMON_START_TIMEOUT_MS, ON_DEMAND_LOG_FILE } from "../../api/index.js";
import { CliFailure } from "./args.js";
import type { CliIO } from "./command.js";
import { startProgress } from "../terminal/progress.js";
import { formatPeriod, ON_DEMAND_IDLE_EXIT_MS } from "../commands/serve.js";
import { installDir, stateDir } from "../../platform/index.js";

/** How often a starting daemon is looked for. */
const DAEMON_POLL_MS = 100;
/** Bytes of that log read to say why a daemon did not start. */
const MAX_LOG_TAIL_BYTES = 4096;

/** The running daemon for the state dir, or one started now; throws CliFailure when none answers in time. */
export async function daemonFor(io: CliIO, who: string): Promise<DaemonClient> {
  const state = stateDir(io.env);
  const running = await findRunningDaemon(state);
  if (running !== undefined) return running;
  return startOnDemand(io, who, state);
}

async function startOnDemand(io: CliIO, who: string, state: string): Promise<DaemonClient> {
  await mkdir(state, { recursive: true, mode: 0o700 });
  const log = join(state, ON_DEMAND_LOG_FILE);
  // Its own session and no terminal: it outlives this command and must not get its Ctrl-C.
  const child = spawn(process.execPath, [join(installDir(), "bin", "albedo"), "serve", "--on-demand", "--log-file", log], {
    env: io.env,
    cwd: io.cwd,
    detached: true,
    stdio: "ignore",
  });
  let exited: number | null | undefined;
  child.once("exit", (code) => (exited = code));
  child.unref();
  const done = startProgress(io.stderr, `${who}: starting a daemon for ${state}`);
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  try {
    while (Date.now() < deadline) {
      // Another command may have started one meanwhile: it serves as well.
      const found = await findRunningDaemon(state);
      if (found !== undefined) {
        done();
        io.stderr.write(`${who}: started a daemon at ${found.info.url}; it exits after ${formatPeriod(ON_DEMAND_IDLE_EXIT_MS)} without sessions (\`albedo daemon stop\` ends it now)\n`);
        return found;
      }
      if (exited !== undefined) throw new CliFailure(`the daemon did not start (exit ${exited})${await lastLine(log)}; see ${log}`);
      await new Promise((resolve) => setTimeout(resolve, DAEMON_POLL_MS));
    }
    throw new CliFailure(`the daemon did not answer within ${DAEMON_START_TIMEOUT_MS / 1000} s (DAEMON_START_TIMEOUT_MS); see ${log}`);
  } finally {
    done();
  }
}

/** ": <the log's last line>", or "" when there is none. */
async function lastLine(file: string): Promise<string> {
  const text = await readFile(file, "utf8").catch(() => "");
  const line = text.slice(-MAX_LOG_TAIL_BYTES).trim().split("\n").at(-1);
  return line ? `: ${line}` : "";
}
