/**
 * 1,000 small `readResource` calls on one temp skill: each call checks the pins (SKILL.md is
 * reread only when its stamp moves), checks the path and reads one page, as a Python `skills.read` would.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { discoverCatalog, findSkill, readResource } from "../src/skills/index.js";
import { limitGoal } from "./goals.js";
import { median, percentile } from "./stats.js";

/** Reads measured in one run. */
export const BENCH_READS = 1000;
/** Bytes per page asked for. */
const PAGE_BYTES = 512;
/** Goal: one read (pins, path check, one page) well under the kernel-to-runtime transport floor (~180 us here), so the read is not what a call waits on. */
const READ_GOAL_US = 100;

/** Runs the benchmark; returns median and p95 per read in microseconds and the total in milliseconds. */
export async function benchReads(): Promise<Record<string, unknown>> {
  const base = await mkdtemp(join(tmpdir(), "albedo-bench-reads-"));
  try {
    const skillDir = join(base, "ws", ".albedo", "skills", "bench-reads");
    await mkdir(join(skillDir, "references"), { recursive: true });
    await mkdir(join(base, "home"));
    await mkdir(join(base, "install"));
    const body = "Read the reference before answering.\n".repeat(40);
    await writeFile(join(skillDir, "SKILL.md"), `---\nname: bench-reads\ndescription: Bench fixture.\n---\n${body}`);
    await writeFile(join(skillDir, "references", "notes.md"), "A short note with some text. ".repeat(200));
    const snapshot = await discoverCatalog({ workspace: join(base, "ws"), home: join(base, "home"), install: join(base, "install") });
    const entry = findSkill(snapshot, "bench-reads");
    if (entry === undefined) throw new Error("bench fixture skill was not discovered");
    const micros: number[] = [];
    const started = performance.now();
    for (let i = 0; i < BENCH_READS; i++) {
      const t0 = performance.now();
      await readResource(entry, "references/notes.md", (i * 97) % 4096, PAGE_BYTES);
      micros.push((performance.now() - t0) * 1000);
    }
    const totalMs = performance.now() - started;
    return {
      reads: BENCH_READS,
      median_us: Math.round(median(micros)),
      p95_us: Math.round(percentile(micros, 95)),
      total_ms: Math.round(totalMs),
      ...limitGoal(median(micros), READ_GOAL_US),
    };
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}
