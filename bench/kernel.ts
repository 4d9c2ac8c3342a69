/**
 * Kernel bridge benchmarks, each beside its baseline, measured in one run on one machine: cold
 * session open vs jupyter_client's start_new_kernel (alternating); trivial execute round trip vs
 * jupyter_client's (bench/execute.ts); `await skills.read` vs a bare pyzmq DEALER echo
 * (bench/rpc.ts); reload with 128 unchanged skills; a warm open from the daemon's pool (K-11); and how long
 * an interrupt takes to end a cell that awaits and one that blocks (K-4: within a second).
 */
import { performance } from "node:perf_hooks";
import { WarmPool } from "../src/daemon/index.js";
import { resolvePython } from "../src/python/index.js";
import type { Session } from "../src/session/index.js";
import { UNSETTLED_FILE_MS } from "../src/skills/index.js";
import { JupyterClientBaseline } from "./baseline.js";
import { benchExecute } from "./execute.js";
import { goal, limitGoal } from "./goals.js";
import { benchRpc } from "./rpc.js";
import { benchDirs, cellText, openSession, writeSkills, type BenchDirs } from "./session.js";
import { median, round } from "./stats.js";

/** Cold opens on each side, alternating. */
const OPEN_RUNS = 5;
const RELOAD_RUNS = 20;
const WARM_OPEN_RUNS = 5;
const INTERRUPT_RUNS = 10;
/** Longest a bench cell may take to print that it runs before the interrupt bench gives up. */
const CELL_START_TIMEOUT_MS = 30_000;
/** Longest a spare may take to boot before the warm-open bench gives up. */
const SPARE_BOOT_TIMEOUT_MS = 60_000;
const RELOAD_SKILLS = 128;
/** Goals: cold open within 1.1x of jupyter_client; warm open, reload (128 skills) and interrupt under these. */
const OPEN_GOAL = 1.1;
const WARM_OPEN_GOAL_MS = 50;
const RELOAD_GOAL_MS = 50;
const INTERRUPT_GOAL_MS = 1_000;

const FIRST_CALL = "print((await skills.list())['revision'])";

/** From Session.open to the first `skills.list` answered in a cell. */
async function coldOpen(dirs: BenchDirs): Promise<number> {
  const began = performance.now();
  const session = await openSession(dirs);
  try {
    await cellText(session, FIRST_CALL);
    return performance.now() - began;
  } finally {
    await session.close();
  }
}

async function openTimes(dirs: BenchDirs, baseline: JupyterClientBaseline): Promise<{ albedo: number[]; jupyterClient: number[] }> {
  const albedo: number[] = [];
  const jupyterClient: number[] = [];
  for (let i = 0; i < OPEN_RUNS; i++) {
    albedo.push(await coldOpen(dirs));
    jupyterClient.push((await baseline.ask<{ ms: number }>("open")).ms);
  }
  return { albedo, jupyterClient };
}

/** From session.kernel.interrupt() to the cell's reply, for a cell that awaits and one that blocks in C code. */
async function interruptTimes(session: Session): Promise<{ awaiting: number[]; blocking: number[] }> {
  const cells = {
    awaiting: "import asyncio\nprint('running', flush=True)\nawait asyncio.sleep(100)",
    blocking: "import time\nprint('running', flush=True)\ntime.sleep(100)",
  };
  const out = { awaiting: [] as number[], blocking: [] as number[] };
  for (let i = 0; i < INTERRUPT_RUNS; i++) {
    for (const kind of ["awaiting", "blocking"] as const) {
      const future = session.kernel.execute(cells[kind]);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("bench: the cell to interrupt never started")), CELL_START_TIMEOUT_MS);
        future.onOutput((o) => {
          if (o.header.msg_type === "stream") (clearTimeout(timer), resolve());
        });
      });
      const began = performance.now();
      await session.kernel.interrupt();
      const reply = await future.done;
      if (reply.status !== "error") throw new Error(`bench: an interrupted ${kind} cell ended with ${reply.status}`);
      out[kind].push(performance.now() - began);
    }
  }
  return out;
}

/**
 * Reloads of an unchanged tree, as most reloads are. The files were written just before; a session
 * keeps no parse of a file younger than UNSETTLED_FILE_MS, so the timing starts once they are older
 * and after one untimed reload that fills the session's parse cache.
 */
async function reloadTimes(session: Session, settledAt: number): Promise<number[]> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, settledAt - Date.now())));
  await session.reload();
  const times: number[] = [];
  for (let i = 0; i < RELOAD_RUNS; i++) {
    const t0 = performance.now();
    await session.reload();
    times.push(performance.now() - t0);
  }
  return times;
}

/** Open from a ready spare until the namespaces answer, as the daemon does for a workspace it has seen. */
async function warmOpenTimes(dirs: BenchDirs): Promise<number[]> {
  const pool = new WarmPool({ stateDir: dirs.state, size: 1, open: () => openSession(dirs) });
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
        await cellText(session, FIRST_CALL);
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

async function withSession<T>(dirs: BenchDirs, body: (session: Session) => Promise<T>): Promise<T> {
  const session = await openSession(dirs);
  try {
    return await body(session);
  } finally {
    await session.close();
  }
}

/** Runs the comparisons; returns medians (ms), ratios and goals. */
export async function benchKernel(): Promise<Record<string, unknown>> {
  const python = await resolvePython(process.env);
  const dirs = await benchDirs();
  const baseline = JupyterClientBaseline.start(python.path);
  try {
    await writeSkills(dirs.workspace, 1);
    const open = await openTimes(dirs, baseline);
    await baseline.ask("boot");
    const execute = await withSession(dirs, (session) => benchExecute(session, baseline));
    const rpc = await withSession(dirs, benchRpc);
    const warm = await warmOpenTimes(dirs);
    const interrupt = await withSession(dirs, interruptTimes);
    await writeSkills(dirs.workspace, RELOAD_SKILLS);
    const settledAt = Date.now() + UNSETTLED_FILE_MS + 1;
    const reload = await withSession(dirs, (session) => reloadTimes(session, settledAt));
    const slowestInterrupt = Math.max(median(interrupt.awaiting), median(interrupt.blocking));
    return {
      open: { albedo_median_ms: round(median(open.albedo)), jupyter_client_median_ms: round(median(open.jupyterClient)), ...goal(median(open.albedo), median(open.jupyterClient), OPEN_GOAL), runs: OPEN_RUNS },
      execute,
      rpc_read: rpc,
      warm_open: { median_ms: round(median(warm)), cold_open_median_ms: round(median(open.albedo)), ...limitGoal(median(warm), WARM_OPEN_GOAL_MS), runs: WARM_OPEN_RUNS },
      interrupt: { awaiting_median_ms: round(median(interrupt.awaiting)), blocking_median_ms: round(median(interrupt.blocking)), ...limitGoal(slowestInterrupt, INTERRUPT_GOAL_MS), runs: INTERRUPT_RUNS },
      reload: { skills: RELOAD_SKILLS, median_ms: round(median(reload)), ...limitGoal(median(reload), RELOAD_GOAL_MS), runs: RELOAD_RUNS },
    };
  } finally {
    await baseline.quit();
    await dirs.remove();
  }
}
