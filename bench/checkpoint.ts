/**
 * What durable kernel state (K-15) costs: the kernel's own time checkpointing after a cell (it runs
 * after the reply and idle went out, so it is read from the kernel's record of its last write), a
 * trivial and a rebinding execute with checkpoints on beside a session with them off (alternating
 * batches), and a 100 MB namespace restored after a kill -9 of the kernel against the same kill
 * with checkpoints off plus the kernel reading the same bytes from a file.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Session } from "../src/session/index.js";
import { goal, limitGoal } from "./goals.js";
import { benchDirs, cellJson, cellText, type BenchDirs } from "./session.js";
import { median, round } from "./stats.js";

/** Cells timed per checkpoint measure, after one untimed. */
const CHECKPOINT_RUNS = 20;
/** Alternating batches of executes on the two sessions, and executes per batch. */
const EXECUTE_ROUNDS = 10;
const EXECUTES_PER_ROUND = 20;
/** Kills timed per side for the restore. */
const RESTORE_RUNS = 3;
/** How long the bench waits for a killed kernel to answer again. */
const RESTART_WAIT_MS = 120_000;
/** Goals: the kernel's checkpoint of a cell rebinding 100 small names; execute with checkpoints on against off; the restore against the cold path. */
const CELL_GOAL_MS = 20;
const EXECUTE_GOAL = 1.1;
const RESTORE_GOAL = 1.5;
const MB = 1024 * 1024;

function open(dirs: BenchDirs, checkpoints: boolean): Promise<Session> {
  return Session.open({ workspace: dirs.workspace, home: dirs.home, stateDir: dirs.state, env: { ...process.env, HOME: dirs.home }, checkpoints });
}

/** The kernel's record of its last checkpoint, read by the next cell (whose start flushes any still pending). */
const LAST = "import albedo, json; print(json.dumps({'ms': albedo._checkpoints.last_ms, 'bytes': albedo._checkpoints.last_bytes}))";

/** Runs `cell` then reads the checkpoint it caused, CHECKPOINT_RUNS times after one untimed: medians of the kernel's ms and bytes written. */
async function checkpointOf(session: Session, cell: string): Promise<{ median_ms: number; max_ms: number; median_bytes: number }> {
  const ms: number[] = [];
  const bytes: number[] = [];
  for (let i = 0; i <= CHECKPOINT_RUNS; i++) {
    await cellText(session, cell);
    const last = await cellJson<{ ms: number; bytes: number }>(session, LAST);
    if (i === 0) continue;
    ms.push(last.ms);
    bytes.push(last.bytes);
  }
  return { median_ms: round(median(ms)), max_ms: round(Math.max(...ms)), median_bytes: median(bytes) };
}

async function executes(session: Session, code: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < EXECUTES_PER_ROUND; i++) {
    const began = performance.now();
    const reply = await session.kernel.execute(code).done;
    times.push(performance.now() - began);
    if (reply.status !== "ok") throw new Error(`bench execute failed: ${code}`);
  }
  return times;
}

/** Request until reply and idle, on checkpoints on and off in alternating batches. */
async function executeOnOff(on: Session, off: Session, code: string): Promise<Record<string, unknown>> {
  const timesOn: number[] = [];
  const timesOff: number[] = [];
  await executes(on, code);
  await executes(off, code);
  for (let round = 0; round < EXECUTE_ROUNDS; round++) {
    timesOn.push(...(await executes(on, code)));
    timesOff.push(...(await executes(off, code)));
  }
  const [medOn, medOff] = [median(timesOn), median(timesOff)];
  return { code, on_median_ms: round(medOn), off_median_ms: round(medOff), ...goal(medOn, medOff, EXECUTE_GOAL) };
}

/** kill -9 of the session's kernel until a cell printing `probe` answers on the restarted kernel, in ms. */
async function killUntilAnswer(session: Session, probe: string): Promise<number> {
  const pid = session.status().pid;
  if (pid === undefined) throw new Error("bench: the session's kernel has no pid");
  const began = performance.now();
  process.kill(pid, "SIGKILL");
  while (performance.now() - began < RESTART_WAIT_MS) {
    const fresh = session.status().pid;
    if (fresh !== undefined && fresh !== pid && ["ready", "idle"].includes(session.status().kernel)) {
      // A cell sent as the kernel turns ready may meet the old one's end: tried again; a failing probe is the bench's error.
      const failed = await cellText(session, probe).then(() => undefined, (error: unknown) => error);
      if (failed === undefined) return performance.now() - began;
      if (!String(failed).includes("kernel")) throw failed;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`bench: the killed kernel did not answer within RESTART_WAIT_MS = ${RESTART_WAIT_MS}`);
}

async function restore100mb(dirs: BenchDirs, on: Session, off: Session): Promise<Record<string, unknown>> {
  const file = join(dirs.workspace, "hundred.bin");
  await writeFile(file, Buffer.alloc(100 * MB, 7));
  const restored: number[] = [];
  const cold: number[] = [];
  const read: number[] = [];
  // Two names of 50 MB: one of 100 MB would be over MAX_CHECKPOINT_NAME_BYTES, skipped and said.
  await cellText(on, "import os\nbig1 = os.urandom(50 * 1024 * 1024)\nbig2 = os.urandom(50 * 1024 * 1024)");
  // The next cell's start flushes the checkpoint still pending: the kill finds it written.
  const written = await cellJson<{ ms: number; bytes: number }>(on, LAST);
  for (let i = 0; i < RESTORE_RUNS; i++) {
    restored.push(await killUntilAnswer(on, "assert len(big1) + len(big2) == 100 * 1024 * 1024"));
    cold.push(await killUntilAnswer(off, "pass"));
    const began = performance.now();
    await cellText(off, "with open('hundred.bin', 'rb') as f: data = f.read()\ndel data");
    read.push(performance.now() - began);
  }
  const baseline = median(cold) + median(read);
  const report = on.restores.last;
  return {
    restore_median_ms: round(median(restored)),
    cold_restart_median_ms: round(median(cold)),
    read_100mb_median_ms: round(median(read)),
    restored: report?.summary ?? null,
    write_100mb_ms: round(written.ms),
    write_100mb_bytes: written.bytes,
    ...goal(median(restored), baseline, RESTORE_GOAL),
  };
}

export async function benchCheckpoint(): Promise<Record<string, unknown>> {
  const dirs = await benchDirs("alb-bench-ckpt-");
  const on = await open(dirs, true);
  const off = await open(dirs, false);
  try {
    const names = Array.from({ length: 100 }, (_, i) => `n${i} = [${i}]`).join("\n");
    const smallCell = await checkpointOf(on, "x = [1, 2, 3]");
    const hundredNames = await checkpointOf(on, names);
    await cellText(on, "import os\nheavy = os.urandom(50 * 1024 * 1024)");
    const besideHeavy = await checkpointOf(on, "x = [1, 2, 3]");
    await cellText(on, "del heavy");
    const trivial = await executeOnOff(on, off, "1");
    const rebinding = await executeOnOff(on, off, "x = [1, 2, 3]");
    return {
      small_cell: smallCell,
      cell_ms: { ...hundredNames, ...limitGoal(hundredNames.median_ms, CELL_GOAL_MS) },
      beside_50mb: besideHeavy,
      execute_trivial: trivial,
      execute_rebinding: rebinding,
      restore_100mb: await restore100mb(dirs, on, off),
    };
  } finally {
    await on.close();
    await off.close();
    await dirs.remove();
  }
}
