import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { discoverCatalog, MAX_CANDIDATES } from "../src/skills/index.js";
import { limitGoal } from "./goals.js";
import { median, percentile, round } from "./stats.js";

/** Discoveries timed per run; the first few warm the file cache and are discarded. */
const DISCOVERY_RUNS = 30;
const WARMUP_RUNS = 3;
/** Goal: a full discovery of 128 skills in under this, in-process on a warm file cache (the reload bench holds a session's whole reload of the same tree to 50 ms). */
const DISCOVERY_GOAL_MS = 100;

/** Times full discoveries of a temp tree of MAX_CANDIDATES (128) valid skills; returns median and p95 in ms. */
export async function benchDiscovery(): Promise<Record<string, unknown>> {
  const base = mkdtempSync(join(tmpdir(), "albedo-bench-skills-"));
  try {
    const workspace = join(base, "ws");
    const root = join(workspace, ".albedo", "skills");
    for (let i = 0; i < MAX_CANDIDATES; i++) {
      const name = `skill-${String(i).padStart(3, "0")}`;
      mkdirSync(join(root, name), { recursive: true });
      const text = `---\nname: ${name}\ndescription: Benchmark skill number ${i}.\nmetadata:\n  index: "${i}"\n---\n# ${name}\n\n${"Step.\n".repeat(200)}`;
      writeFileSync(join(root, name, "SKILL.md"), text);
    }
    const options = { workspace, home: join(base, "home"), install: join(base, "install") };
    const times: number[] = [];
    for (let run = 0; run < WARMUP_RUNS + DISCOVERY_RUNS; run++) {
      const start = performance.now();
      const snapshot = await discoverCatalog(options);
      const elapsed = performance.now() - start;
      if (snapshot.skills.length !== MAX_CANDIDATES) throw new Error(`bench tree gave ${snapshot.skills.length} skills, expected ${MAX_CANDIDATES}`);
      if (run >= WARMUP_RUNS) times.push(elapsed);
    }
    return { skills: MAX_CANDIDATES, runs: DISCOVERY_RUNS, median_ms: round(median(times)), p95_ms: round(percentile(times, 95)), ...limitGoal(median(times), DISCOVERY_GOAL_MS) };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
