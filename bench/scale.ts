/**
 * Scale figures, each beside its baseline, against a real `albedo serve` holding SCALE_SESSIONS
 * sessions (the default session cap) on one workspace:
 * - SCALE_SESSIONS opens fired at once (POST /sessions, then a cell's first `skills.list`) vs as
 *   many jupyter_client kernels started at once (start_new_async_kernel);
 * - memory per session (the kernel and its sandbox processes, PSS) vs a bare ipykernel, with both
 *   sets alive and having run a cell;
 * - RPC throughput: every session runs READS_PER_SESSION concurrent `skills.read` at once, vs the
 *   same number of pipelined round trips through a bare pyzmq DEALER to a ZeroMQ echo;
 * - the daemon's own PSS with no session and with SCALE_SESSIONS;
 * - admission under load: EVENTS messages posted at once during another throughput run (events.ts).
 * The daemon serves one session first (warmUp), as a daemon that has run a while has.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { MAX_SESSIONS } from "../src/daemon/index.js";
import { resolvePython } from "../src/python/index.js";
import { call, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../test/daemon/support/daemon.js";
import { JupyterClientBaseline } from "./baseline.js";
import { cpuDuring, mainThreadCpuMs, processCpuMs, treeCpuMs } from "./cpu.js";
import { withEcho } from "./echo.js";
import { eventsDuring, writeEventsModel } from "./events.js";
import { goal } from "./goals.js";
import { pssKb, treePssMb } from "./pss.js";
import { writeSkills } from "./session.js";
import { median, percentile, round } from "./stats.js";

/** Sessions opened at once: the default session cap. */
const SCALE_SESSIONS = MAX_SESSIONS;
/** Concurrent reads per session in the throughput run. */
const READS_PER_SESSION = 500;
/** Goals: opening many at once within the cold-open goal of jupyter_client; a session's memory within 1.2x of a bare ipykernel. */
const OPEN_AT_ONCE_GOAL = 1.1;
const MEMORY_GOAL = 1.2;
/** Goal: the time per read with every session reading at once within this of the echo's time per round trip (the single-call goal's bound). */
const THROUGHPUT_GOAL = 1.5;
/** PSS samples of the daemon per reading, DAEMON_PSS_GAP_MS apart; the reading is the least of them. */
const DAEMON_PSS_SAMPLES = 5;
const DAEMON_PSS_GAP_MS = 200;
/** Goal: what the daemon itself holds per session at most this share of a bare kernel's memory. */
const DAEMON_SHARE_GOAL = 0.1;
/** Where the echo for the throughput baseline listens: the shared workspace, which every sandboxed kernel sees. */
const ECHO_SOCKET = ".bench-echo";

interface SessionAnswer { id: string; kernel: { pid: number | null } }

async function execute(daemon: DaemonProcess, id: string, code: string): Promise<string> {
  const answer = await call(daemon, "POST", `/sessions/${id}/execute`, { code });
  const outputs = (answer.body?.outputs ?? []) as { msg_type: string; content: { text?: string; evalue?: string } }[];
  if (answer.status !== 200 || answer.body.status !== "ok") {
    throw new Error(`bench: a scale cell failed (${answer.status}): ${outputs.map((o) => o.content.text ?? o.content.evalue).join("")}`);
  }
  return outputs.filter((o) => o.msg_type === "stream").map((o) => o.content.text).join("");
}

/** Opens SCALE_SESSIONS at once; each time runs from its POST to its first `skills.list` answered in a cell. */
async function openAtOnce(daemon: DaemonProcess, dirs: Dirs): Promise<{ ms: number[]; sessions: SessionAnswer[] }> {
  const opened = await Promise.all(Array.from({ length: SCALE_SESSIONS }, async () => {
    const began = performance.now();
    const answer = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
    if (answer.status !== 201) throw new Error(`bench: a session did not open (${answer.status}): ${JSON.stringify(answer.body)}`);
    await execute(daemon, answer.body.id, "print((await skills.list())['revision'])");
    return { ms: performance.now() - began, session: answer.body as SessionAnswer };
  }));
  return { ms: opened.map((o) => o.ms), sessions: opened.map((o) => o.session) };
}

/**
 * One session opened, used and closed: what a daemon that has run a while has done. Its one-time
 * work (the interpreter and bubblewrap probes, loading its modules) is then not in the figures,
 * just as jupyter_client's imports are done before its driver starts kernels.
 */
async function warmUp(daemon: DaemonProcess, dirs: Dirs): Promise<void> {
  const answer = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
  if (answer.status !== 201) throw new Error(`bench: the warm-up session did not open (${answer.status}): ${JSON.stringify(answer.body)}`);
  await execute(daemon, answer.body.id, "print((await skills.list())['revision'])");
  await call(daemon, "DELETE", `/sessions/${answer.body.id}`);
}

/** Calls per second over all sessions: every session's cell starts its batch at once; the span is first start to last end (kernel clocks). */
async function throughput(daemon: DaemonProcess, sessions: SessionAnswer[], code: string): Promise<number> {
  const spans = await Promise.all(sessions.map(async ({ id }) => JSON.parse((await execute(daemon, id, code)).trim().split("\n").at(-1)!) as [number, number]));
  const span = Math.max(...spans.map(([, end]) => end)) - Math.min(...spans.map(([start]) => start));
  return (sessions.length * READS_PER_SESSION) / span;
}

const READS_CELL = [
  "import asyncio, json, time",
  "_b = time.time()",
  `_pages = await asyncio.gather(*[skills.read('skill-000', limit=256) for _ in range(${READS_PER_SESSION})])`,
  "assert all(p['size'] > 0 for p in _pages)",
  "print(json.dumps([_b, time.time()]))",
].join("\n");

const echoCell = (endpoint: string) => [
  "import json, time, zmq",
  "_s = zmq.Context.instance().socket(zmq.DEALER); _s.linger = 0",
  `_s.connect(${JSON.stringify(endpoint)})`,
  "_p = b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{}}'",
  "_b = time.time()",
  `for _ in range(${READS_PER_SESSION}): _s.send_multipart([b'token', _p])`,
  `for _ in range(${READS_PER_SESSION}): _s.recv_multipart()`,
  "_e = time.time(); _s.close()",
  "print(json.dumps([_b, _e]))",
].join("\n");

async function echoThroughput(daemon: DaemonProcess, dirs: Dirs, sessions: SessionAnswer[]): Promise<number> {
  const endpoint = `ipc://${join(dirs.workspace, ECHO_SOCKET)}`;
  return withEcho(endpoint, () => throughput(daemon, sessions, echoCell(endpoint)));
}

/**
 * A process's PSS in MiB with its garbage-collection sawtooth taken out: V8's heap grows between
 * collections by more than 16 sessions' state, so one sample can read lower with sessions than
 * without. The least of a few samples is the nearest to what the process holds.
 */
async function settledPssMb(pid: number): Promise<number> {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < DAEMON_PSS_SAMPLES; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, DAEMON_PSS_GAP_MS));
    least = Math.min(least, pssKb(pid) ?? Number.NaN);
  }
  return least / 1024;
}

const summary = (values: number[]) => ({ p50_ms: round(median(values)), p99_ms: round(percentile(values, 99)) });

/** Closes the sessions through the daemon, as their clients would. */
async function closeAll(daemon: DaemonProcess, sessions: SessionAnswer[]): Promise<void> {
  await Promise.all(sessions.map(({ id }) => call(daemon, "DELETE", `/sessions/${id}`)));
}

export async function benchScale(): Promise<Record<string, unknown>> {
  const python = await resolvePython(process.env);
  const dirs = await makeDirs();
  const baseline = JupyterClientBaseline.start(python.path);
  let daemon: DaemonProcess | undefined;
  try {
    await writeSkills(dirs.workspace, 1);
    writeEventsModel(dirs.root, dirs.state);
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0", "--max-sessions", String(SCALE_SESSIONS)]);
    await warmUp(daemon, dirs);
    const daemonMb = () => settledPssMb(daemon!.process.pid!);
    const daemonIdleMb = await daemonMb();
    // Two rounds in opposite orders, so neither side always opens beside the other's idle kernels.
    const jupyterClientOpen = (await baseline.ask<{ ms: number[] }>(`concurrent ${SCALE_SESSIONS}`)).ms;
    await baseline.ask("stop");
    const first = await openAtOnce(daemon, dirs);
    await closeAll(daemon, first.sessions);
    const daemonPid = daemon.process.pid!;
    const daemonProbes = { daemon_main_thread: () => mainThreadCpuMs(daemonPid), daemon_all_threads: () => processCpuMs(daemonPid) };
    const { result: albedoOpen, cpuMs: openDaemonMs } = await cpuDuring(daemonProbes, () => openAtOnce(daemon!, dirs));
    jupyterClientOpen.push(...(await baseline.ask<{ ms: number[] }>(`concurrent ${SCALE_SESSIONS}`)).ms);
    await baseline.ask("touch");
    // Both sets alive and past one cell: shared pages split the same way for both.
    const barePids = (await baseline.ask<{ pids: number[] }>("pids")).pids;
    const bareMb = barePids.map(treePssMb);
    // CPU per session of the opens: a kernel's since its start (its boot and first cell), and the daemon's.
    const kernels = () => albedoOpen.sessions.reduce((sum, s) => sum + treeCpuMs(s.kernel.pid!), 0);
    const perSessionMs = (ms: number) => round(ms / SCALE_SESSIONS);
    const openCpu = {
      albedo: {
        ...Object.fromEntries(Object.entries(openDaemonMs).map(([k, ms]) => [k, perSessionMs(ms)])),
        kernel: perSessionMs(kernels()),
      },
      jupyter_client: { kernel: perSessionMs(barePids.reduce((sum, pid) => sum + treeCpuMs(pid), 0)) },
    };
    const sessionMb = albedoOpen.sessions.map((s) => treePssMb(s.kernel.pid!));
    const daemonBusyMb = await daemonMb();
    await baseline.ask("stop");
    // Where each run's CPU went: the daemon's main thread serves every call of every session.
    const albedoRun = await cpuDuring(
      { ...daemonProbes, kernels },
      () => throughput(daemon!, albedoOpen.sessions, READS_CELL),
    );
    const echoRun = await cpuDuring(
      { echo_process: () => processCpuMs(process.pid), kernels },
      () => echoThroughput(daemon!, dirs, albedoOpen.sessions),
    );
    const [reads, echoes] = [albedoRun.result, echoRun.result];
    const ids = albedoOpen.sessions.map(({ id }) => id);
    const events = await eventsDuring(daemon, ids, () => throughput(daemon!, albedoOpen.sessions, READS_CELL));
    const calls = SCALE_SESSIONS * READS_PER_SESSION;
    const perCallUs = (cpuMs: Record<string, number>) => Object.fromEntries(Object.entries(cpuMs).map(([k, ms]) => [k, round((ms * 1000) / calls)]));
    const opens = [...first.ms, ...albedoOpen.ms];
    return {
      sessions: SCALE_SESSIONS,
      open_at_once: {
        albedo: summary(opens), jupyter_client: summary(jupyterClientOpen),
        p99_ratio: round(percentile(opens, 99) / percentile(jupyterClientOpen, 99)),
        // CPU per session, ms, of the second round: the daemon's during the opens, each kernel's since its start.
        cpu_ms_per_session: openCpu,
        ...goal(median(opens), median(jupyterClientOpen), OPEN_AT_ONCE_GOAL),
        rounds: 2,
      },
      memory_per_session: {
        albedo_pss_mb: round(median(sessionMb)), bare_ipykernel_pss_mb: round(median(bareMb)),
        ...goal(median(sessionMb), median(bareMb), MEMORY_GOAL),
      },
      rpc_throughput: {
        reads_per_session: READS_PER_SESSION,
        albedo_calls_per_s: Math.round(reads), pyzmq_echo_calls_per_s: Math.round(echoes),
        // Time per call over the echo's: lower is better, as for every other goal.
        ...goal(echoes, reads, THROUGHPUT_GOAL),
        // CPU per call, µs: the echo process is this bench's (its echo and its HTTP calls).
        cpu_us_per_call: { albedo: perCallUs(albedoRun.cpuMs), echo: perCallUs(echoRun.cpuMs) },
      },
      // No goal: how long admission takes while every session reads and turns run.
      events_during_reads: { reads_per_session: READS_PER_SESSION, ...events },
      daemon_memory: {
        idle_pss_mb: round(daemonIdleMb), with_sessions_pss_mb: round(daemonBusyMb), per_session_mb: round((daemonBusyMb - daemonIdleMb) / SCALE_SESSIONS),
        // Per session, over a bare kernel's PSS.
        ...goal((daemonBusyMb - daemonIdleMb) / SCALE_SESSIONS, median(bareMb), DAEMON_SHARE_GOAL),
      },
    };
  } finally {
    await baseline.quit();
    if (daemon) {
      daemon.process.kill("SIGTERM");
      await daemon.exited;
    }
    await dirs.cleanup();
  }
}
