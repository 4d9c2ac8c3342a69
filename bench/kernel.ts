/**
 * Kernel bridge benchmarks, each beside its baseline, measured in one run on one machine:
 * cold session open vs jupyter_client start_new_kernel; trivial execute round trip vs
 * jupyter_client's; `await skills.read` vs a bare pyzmq DEALER echo (the transport floor);
 * reload with 128 skills; a warm open from the daemon's pool (K-11) vs the cold open; and how
 * long an interrupt takes to end a cell that awaits and one that blocks (K-4: within a second).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { Router } from "zeromq";
import { WarmPool } from "../src/daemon/index.js";
import { resolvePython } from "../src/python/index.js";
import { Session } from "../src/session/index.js";
import { installDir } from "../src/settings/paths.js";
import { median, round } from "./stats.js";

const OPEN_RUNS = 5;
const EXECUTE_RUNS = 200;
/** Executes run and discarded before timing, on both sides: the first cells of a fresh kernel are slower. */
const EXECUTE_WARMUP = 20;
const RPC_ROUNDS = 1000;
const RELOAD_RUNS = 20;
const WARM_OPEN_RUNS = 5;
const INTERRUPT_RUNS = 10;
/** Longest a bench cell may take to print that it runs before the interrupt bench gives up. */
const CELL_START_TIMEOUT_MS = 30_000;
/** Longest a spare may take to boot before the warm-open bench gives up. */
const SPARE_BOOT_TIMEOUT_MS = 60_000;
const RELOAD_SKILLS = 128;
const BASELINE_TIMEOUT_MS = 300_000;

const run = promisify(execFile);

interface Dirs { root: string; workspace: string; home: string; state: string }

async function makeDirs(): Promise<Dirs> {
  const root = await mkdtemp(join(tmpdir(), "alb-bench-"));
  const dirs = { root, workspace: join(root, "ws"), home: join(root, "home"), state: join(root, "st") };
  await Promise.all([mkdir(dirs.workspace), mkdir(dirs.home), mkdir(dirs.state)]);
  return dirs;
}

async function writeSkills(workspace: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const name = `skill-${String(i).padStart(3, "0")}`;
    const dir = join(workspace, ".albedo", "skills", name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: Bench skill ${i}.\n---\n${"Step.\n".repeat(50)}`);
  }
}

function open(dirs: Dirs): Promise<Session> {
  return Session.open({ workspace: dirs.workspace, home: dirs.home, stateDir: dirs.state, env: { ...process.env, HOME: dirs.home } });
}

async function cellValue(session: Session, code: string): Promise<string> {
  const future = session.execute(code);
  let out = "";
  future.onOutput((o) => {
    if (o.header.msg_type === "stream") out += (o.content as { text: string }).text;
  });
  const reply = await future.done;
  if (reply.status !== "ok") throw new Error(`bench cell failed: ${code.slice(0, 60)}`);
  return out;
}

async function albedoOpenAndExecute(dirs: Dirs): Promise<{ open: number[]; execute: number[] }> {
  const openTimes: number[] = [];
  const executeTimes: number[] = [];
  for (let i = 0; i < OPEN_RUNS; i++) {
    const began = performance.now();
    const session = await open(dirs);
    try {
      await cellValue(session, "print((await skills.list())['revision'])");
      openTimes.push(performance.now() - began);
      if (i === 0) {
        for (let j = 0; j < EXECUTE_WARMUP; j++) await session.execute("1").done;
        for (let j = 0; j < EXECUTE_RUNS; j++) {
          const t0 = performance.now();
          await session.execute("1").done;
          executeTimes.push(performance.now() - t0);
        }
      }
    } finally {
      await session.close();
    }
  }
  return { open: openTimes, execute: executeTimes };
}

async function jupyterClientBaseline(python: string): Promise<{ start_ms: number[]; execute_ms: number[] }> {
  const script = join(installDir(), "bench", "python", "jupyter_client_baseline.py");
  const { stdout } = await run(python, [script, String(OPEN_RUNS), String(EXECUTE_RUNS), String(EXECUTE_WARMUP)], { timeout: BASELINE_TIMEOUT_MS });
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

async function rpcVersusFloor(dirs: Dirs): Promise<{ rpc: number[]; floor: number[] }> {
  const session = await open(dirs);
  const echo = new Router({ linger: 0 });
  const endpoint = `ipc://${join(session.runDir, "echo")}`;
  await echo.bind(endpoint);
  const serving = (async () => {
    for await (const frames of echo) await echo.send(frames);
  })().catch(() => undefined);
  try {
    const rpc = JSON.parse(await cellValue(session, [
      "import time, json",
      "_t = []",
      `for _ in range(${RPC_ROUNDS}):`,
      "    _b = time.perf_counter()",
      "    await skills.read('skill-000', limit=256)",
      "    _t.append((time.perf_counter() - _b) * 1000)",
      "print(json.dumps(_t))",
    ].join("\n"))) as number[];
    const floorScript = join(installDir(), "bench", "python", "dealer_echo.py");
    const floor = JSON.parse(await cellValue(session, [
      `ECHO_ENDPOINT = ${JSON.stringify(endpoint)}`,
      `ROUNDS = ${RPC_ROUNDS}`,
      `exec(open(${JSON.stringify(floorScript)}).read())`,
      "print(json.dumps(echo_ms))",
    ].join("\n"))) as number[];
    return { rpc, floor };
  } finally {
    echo.close();
    await serving;
    await session.close();
  }
}

/** From session.interrupt() to the cell's reply, for a cell that awaits and one that blocks in C code. */
async function interruptTimes(dirs: Dirs): Promise<{ awaiting: number[]; blocking: number[] }> {
  const session = await open(dirs);
  const cells = {
    awaiting: "import asyncio\nprint('running', flush=True)\nawait asyncio.sleep(100)",
    blocking: "import time\nprint('running', flush=True)\ntime.sleep(100)",
  };
  const out = { awaiting: [] as number[], blocking: [] as number[] };
  try {
    for (let i = 0; i < INTERRUPT_RUNS; i++) {
      for (const kind of ["awaiting", "blocking"] as const) {
        const future = session.execute(cells[kind]);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error("bench: the cell to interrupt never started")), CELL_START_TIMEOUT_MS);
          future.onOutput((o) => {
            if (o.header.msg_type === "stream") (clearTimeout(timer), resolve());
          });
        });
        const began = performance.now();
        await session.interrupt();
        const reply = await future.done;
        if (reply.status !== "error") throw new Error(`bench: an interrupted ${kind} cell ended with ${reply.status}`);
        out[kind].push(performance.now() - began);
      }
    }
  } finally {
    await session.close();
  }
  return out;
}

async function reloadTimes(dirs: Dirs): Promise<number[]> {
  const session = await open(dirs);
  try {
    const times: number[] = [];
    for (let i = 0; i < RELOAD_RUNS; i++) {
      const t0 = performance.now();
      await session.reload();
      times.push(performance.now() - t0);
    }
    return times;
  } finally {
    await session.close();
  }
}

/** Open from a ready spare until the namespaces answer, as the daemon does for a workspace it has seen. */
async function warmOpenTimes(dirs: Dirs): Promise<number[]> {
  const pool = new WarmPool({ stateDir: dirs.state, size: 1, open: () => open(dirs) });
  const extensions = { skills: true };
  const times: number[] = [];
  try {
    for (let i = 0; i < WARM_OPEN_RUNS; i++) {
      pool.refill(dirs.workspace, extensions);
      const deadline = Date.now() + SPARE_BOOT_TIMEOUT_MS;
      while (pool.status()[0]?.state !== "ready") {
        if (Date.now() > deadline) throw new Error("bench: the spare kernel did not boot in time");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const began = performance.now();
      const session = await pool.take(dirs.workspace, extensions);
      if (session === undefined) throw new Error("bench: the pool gave no spare");
      try {
        await cellValue(session, "print((await skills.list())['revision'])");
        times.push(performance.now() - began);
      } finally {
        await session.close();
      }
    }
  } finally {
    await pool.close();
  }
  return times;
}

/** Runs the comparisons; returns medians (ms) and ratios against each baseline. */
export async function benchKernel(): Promise<Record<string, unknown>> {
  const python = await resolvePython(process.env);
  const dirs = await makeDirs();
  try {
    await writeSkills(dirs.workspace, 1);
    const albedo = await albedoOpenAndExecute(dirs);
    const baseline = await jupyterClientBaseline(python.path);
    const { rpc, floor } = await rpcVersusFloor(dirs);
    const warm = await warmOpenTimes(dirs);
    const interrupt = await interruptTimes(dirs);
    await writeSkills(dirs.workspace, RELOAD_SKILLS);
    const reload = await reloadTimes(dirs);
    const ratio = (a: number[], b: number[]) => round(median(a) / median(b));
    return {
      open: { albedo_median_ms: round(median(albedo.open)), jupyter_client_median_ms: round(median(baseline.start_ms)), ratio: ratio(albedo.open, baseline.start_ms), target: "<= 1.1", runs: OPEN_RUNS },
      execute: { albedo_median_ms: round(median(albedo.execute)), jupyter_client_median_ms: round(median(baseline.execute_ms)), ratio: ratio(albedo.execute, baseline.execute_ms), target: "<= 0.5", runs: EXECUTE_RUNS },
      rpc_read: { albedo_median_ms: round(median(rpc)), pyzmq_floor_median_ms: round(median(floor)), ratio: ratio(rpc, floor), target: "<= 1.5", rounds: RPC_ROUNDS },
      warm_open: { median_ms: round(median(warm)), cold_open_median_ms: round(median(albedo.open)), ratio: ratio(warm, albedo.open), runs: WARM_OPEN_RUNS },
      interrupt: { awaiting_median_ms: round(median(interrupt.awaiting)), blocking_median_ms: round(median(interrupt.blocking)), target_ms: "< 1000", runs: INTERRUPT_RUNS },
      reload: { skills: RELOAD_SKILLS, median_ms: round(median(reload)), target_ms: "< 50", runs: RELOAD_RUNS },
    };
  } finally {
    await rm(dirs.root, { recursive: true, force: true });
  }
}
