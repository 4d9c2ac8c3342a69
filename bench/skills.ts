import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { discoverCatalog, MAX_CANDIDATES, ParseCache, UNSETTLED_FILE_MS } from "../src/skills/index.js";
import { limitGoal } from "./goals.js";
import { median, percentile, round } from "./stats.js";

/** Discoveries timed per variant; the first few warm the file cache (and the parse cache) and are discarded. */
const DISCOVERY_RUNS = 30;
const WARMUP_RUNS = 3;
/** Goal: a full discovery of 128 skills in under this, in-process on a warm file cache (the reload bench holds a session's whole reload of the same tree to 50 ms). */
const DISCOVERY_GOAL_MS = 100;

/** Times DISCOVERY_RUNS discoveries after WARMUP_RUNS untimed ones, checking each finds every skill. */
async function timeDiscoveries(discover: () => ReturnType<typeof discoverCatalog>): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < WARMUP_RUNS + DISCOVERY_RUNS; run++) {
    const start = performance.now();
    const snapshot = await discover();
    const elapsed = performance.now() - start;
    if (snapshot.skills.length !== MAX_CANDIDATES) throw new Error(`bench tree gave ${snapshot.skills.length} skills, expected ${MAX_CANDIDATES}`);
    if (run >= WARMUP_RUNS) times.push(elapsed);
  }
  return times;
}

/**
 * Times full discoveries of a temp tree of MAX_CANDIDATES (128) valid skills; returns median and p95
 * in ms, each walk parsing every file (the goal), and beside them the same walks sharing one parse
 * cache as a session's reloads do, once the files are older than UNSETTLED_FILE_MS.
 */
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
    const settled = Date.now() + UNSETTLED_FILE_MS + 1;
    const options = { workspace, home: join(base, "home"), install: join(base, "install") };
    const times = await timeDiscoveries(() => discoverCatalog(options));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, settled - Date.now())));
    const cache = new ParseCache();
    const cached = await timeDiscoveries(() => discoverCatalog(options, cache));
    return {
      skills: MAX_CANDIDATES,
      runs: DISCOVERY_RUNS,
      median_ms: round(median(times)),
      p95_ms: round(percentile(times, 95)),
      ...limitGoal(median(times), DISCOVERY_GOAL_MS),
      cached_median_ms: round(median(cached)),
      cached_p95_ms: round(percentile(cached, 95)),
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
