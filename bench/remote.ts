/**
 * Remote kernel benchmarks (K-12), against a real Jupyter Server on loopback started from the test
 * venv (.venv-jupyter, which `npm test` makes): session open, a trivial execute round
 * trip beside @jupyterlab/services' own execute round trip to the same server, and `await
 * skills.read` over the comm and over the callback WebSocket. The local numbers are in kernel_bridge.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { KernelAPI, KernelConnection } from "@jupyterlab/services";
import { captureServicesConsole, serverSettings, type RemoteKernelSettings } from "../src/kernel/index.js";
import { Session } from "../src/session/index.js";
import { HAVE_JUPYTER_SERVER, freePort, startJupyterServer, type JupyterServer } from "../test/remote/jupyterServer.js";
import { goal, limitGoal } from "./goals.js";
import { NO_TEST_VENV } from "../test/support/testVenv.js";
import { median, percentile, round } from "./stats.js";

const OPEN_RUNS = 5;
const EXECUTE_RUNS = 200;
const EXECUTE_WARMUP = 20;
const READ_ROUNDS = 500;
/** Goals: an execute within 1.1x of @jupyterlab/services' own on the same server; a read over the comm and over the callback under these (the prototype measured 3.2-3.6 ms and 0.17-0.38 ms); an open under this. */
const REMOTE_EXECUTE_GOAL = 1.1;
const COMM_READ_GOAL_MS = 5;
const CALLBACK_READ_GOAL_MS = 1;
const REMOTE_OPEN_GOAL_MS = 2_000;

interface Dirs { root: string; workspace: string; home: string; state: string }

async function makeDirs(remote: RemoteKernelSettings): Promise<Dirs> {
  const root = await mkdtemp(join(tmpdir(), "alb-rbench-"));
  const dirs = { root, workspace: join(root, "ws"), home: join(root, "home"), state: join(root, "st") };
  await Promise.all([mkdir(dirs.workspace), mkdir(dirs.home), mkdir(dirs.state)]);
  const skill = join(dirs.workspace, ".albedo", "skills", "bench");
  await mkdir(skill, { recursive: true });
  await writeFile(join(skill, "SKILL.md"), `---\nname: bench\ndescription: Bench skill.\n---\n${"Step.\n".repeat(50)}`);
  await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ kernel: { remote } }));
  return dirs;
}

function open(dirs: Dirs, server: JupyterServer): Promise<Session> {
  return Session.open({ workspace: dirs.workspace, home: dirs.home, stateDir: dirs.state, env: { ...process.env, HOME: dirs.home, JUPYTER_TOKEN: server.token } });
}

async function cellText(session: Session, code: string): Promise<string> {
  const future = session.execute(code);
  let out = "";
  future.onOutput((o) => {
    if (o.header.msg_type === "stream") out += (o.content as { text: string }).text;
  });
  if ((await future.done).status !== "ok") throw new Error(`bench cell failed: ${code.slice(0, 60)}`);
  return out;
}

async function timed(runs: number, warmup: number, step: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await step();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const began = performance.now();
    await step();
    times.push(performance.now() - began);
  }
  return times;
}

/** `await skills.read` round trips measured inside the kernel, in ms; also says which transport carried them. */
async function reads(session: Session): Promise<{ transport: string; ms: number[] }> {
  return JSON.parse(await cellText(session, [
    "import time, json, albedo",
    "_t = []",
    `for _ in range(${READ_ROUNDS}):`,
    "    _b = time.perf_counter()",
    "    await skills.read('bench', limit=256)",
    "    _t.append((time.perf_counter() - _b) * 1000)",
    "print(json.dumps({'transport': albedo._session.channel.transport, 'ms': _t}))",
  ].join("\n"))) as { transport: string; ms: number[] };
}

/** services' own execute round trip on a kernel of the same server: the floor albedo's remote execute is held to. */
async function servicesExecute(server: JupyterServer): Promise<number[]> {
  const settings = serverSettings({ url: server.url, token: server.token });
  // services' status lines go to stdout, where the bench's JSON goes.
  const release = captureServicesConsole(undefined);
  const model = await KernelAPI.startNew({ name: "python3" }, settings);
  const kernel = new KernelConnection({ model, serverSettings: settings });
  try {
    await kernel.info;
    return await timed(EXECUTE_RUNS, EXECUTE_WARMUP, () => kernel.requestExecute({ code: "1", silent: false, store_history: true }).done);
  } finally {
    await kernel.shutdown().catch(() => kernel.dispose());
    release();
  }
}

async function albedoRemote(server: JupyterServer, remote: RemoteKernelSettings): Promise<{ open: number[]; execute: number[]; reads: { transport: string; ms: number[] } }> {
  const dirs = await makeDirs(remote);
  const openTimes: number[] = [];
  try {
    for (let i = 0; i < OPEN_RUNS; i++) {
      const began = performance.now();
      const session = await open(dirs, server);
      try {
        await cellText(session, "print((await skills.list())['revision'])");
        openTimes.push(performance.now() - began);
        if (i < OPEN_RUNS - 1) continue;
        const execute = await timed(EXECUTE_RUNS, EXECUTE_WARMUP, () => session.execute("1").done);
        // The callback is dialled in the background right after the comm opens.
        await new Promise((settle) => setTimeout(settle, 500));
        return { open: openTimes, execute, reads: await reads(session) };
      } finally {
        await session.close();
      }
    }
    throw new Error("unreachable");
  } finally {
    await rm(dirs.root, { recursive: true, force: true });
  }
}

const summary = (values: number[]) => ({ median_ms: round(median(values)), p90_ms: round(percentile(values, 90)) });

/** Runs the remote comparisons; skipped (with the reason) when no Jupyter Server venv exists. */
export async function benchRemote(): Promise<Record<string, unknown>> {
  if (!HAVE_JUPYTER_SERVER) return { skipped: NO_TEST_VENV };
  return { stock_server: await against(false), server_with_tcp_nodelay: await against(true) };
}

/** One server, stock or with docs/examples/jupyter_server_nodelay.py loaded. */
async function against(nodelay: boolean): Promise<Record<string, unknown>> {
  const server = await startJupyterServer({ nodelay });
  try {
    const baseline = await servicesExecute(server);
    const comm = await albedoRemote(server, { url: server.url });
    const callback = await albedoRemote(server, { url: server.url, callback_url: `ws://127.0.0.1:${await freePort()}/` });
    return {
      open: { albedo: summary(comm.open), ...limitGoal(median(comm.open), REMOTE_OPEN_GOAL_MS), runs: OPEN_RUNS },
      execute: { albedo: summary(comm.execute), services: summary(baseline), ...goal(median(comm.execute), median(baseline), REMOTE_EXECUTE_GOAL), runs: EXECUTE_RUNS },
      skills_read: {
        comm: { ...summary(comm.reads.ms), transport: comm.reads.transport, ...limitGoal(median(comm.reads.ms), COMM_READ_GOAL_MS) },
        callback: { ...summary(callback.reads.ms), transport: callback.reads.transport, ...limitGoal(median(callback.reads.ms), CALLBACK_READ_GOAL_MS) },
        rounds: READ_ROUNDS,
      },
    };
  } finally {
    await server.stop();
  }
}
