/**
 * How fast the CLI starts (`cli.start`): `albedo --version` and `albedo skills list` (a workspace
 * of a few skills) from spawn to exit, against `node -e 0`, in alternating rounds, the first a
 * warm-up; with each one's peak resident memory from a separate run. A command loads its own
 * modules only when it runs, so neither pays for the SDKs, the daemon or the kernel.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { installDir } from "../src/platform/index.js";
import { roots, writeSkill } from "../test/support/skills.js";
import { goal } from "./goals.js";
import { median, round } from "./stats.js";

/** Rounds of the three, alternating; the first is a warm-up (disk caches). */
const ROUNDS = 16;
/** Skills in the listed workspace. */
const SKILLS = 8;
/** Goals of the issue: `--version` within 3× a bare Node start, `skills list` within 5×. */
const VERSION_BOUND = 3;
const SKILLS_LIST_BOUND = 5;
/** Liveness bound for one run. */
const RUN_TIMEOUT_MS = 30_000;
/** Prints the process's peak resident set (KiB) on stderr as it exits. */
const PEAK_RSS_PRELOAD = `data:text/javascript,process.on("exit",()=>process.stderr.write("peak-rss-kib "+process.resourceUsage().maxRSS+"\\n"))`;

interface Kind {
  readonly argv: readonly string[];
  readonly ms: number[];
}

function run(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; stderr: string } {
  const began = performance.now();
  const done = spawnSync(argv[0]!, argv.slice(1), { cwd, env, encoding: "utf8", timeout: RUN_TIMEOUT_MS });
  const ms = performance.now() - began;
  if (done.status !== 0) throw new Error(`${argv.join(" ")} exited ${done.status}: ${done.stderr}`);
  return { ms, stderr: done.stderr };
}

/** Peak resident memory of one run of `argv`, in MB. */
function peakRssMb(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const { stderr } = run([argv[0]!, "--import", PEAK_RSS_PRELOAD, ...argv.slice(1)], cwd, env);
  const kib = Number(/peak-rss-kib (\d+)/.exec(stderr)?.[1]);
  return round(kib / 1024);
}

export async function benchCli(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(join(tmpdir(), "albedo-bench-cli-"));
  try {
    const workspace = join(root, "workspace");
    for (let i = 0; i < SKILLS; i++) writeSkill(roots.wsAgents(workspace), `skill-${i}`);
    const env = { ...process.env, HOME: join(root, "home"), ALBEDO_HOME: join(root, "state") };
    const albedo = [process.execPath, join(installDir(), "bin", "albedo")];
    const kinds: Record<"node" | "version" | "skills_list", Kind> = {
      node: { argv: [process.execPath, "-e", "0"], ms: [] },
      version: { argv: [...albedo, "--version"], ms: [] },
      skills_list: { argv: [...albedo, "skills", "list"], ms: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of Object.values(kinds)) {
        const { ms } = run(kind.argv, workspace, env);
        if (round > 0) kind.ms.push(ms);
      }
    }
    const [node, version, skillsList] = [median(kinds.node.ms), median(kinds.version.ms), median(kinds.skills_list.ms)];
    return {
      start: {
        node_ms: round(node),
        node_peak_rss_mb: peakRssMb(kinds.node.argv, workspace, env),
        version: { median_ms: round(version), peak_rss_mb: peakRssMb(kinds.version.argv, workspace, env), goal: goal(version, node, VERSION_BOUND) },
        skills_list: { median_ms: round(skillsList), peak_rss_mb: peakRssMb(kinds.skills_list.argv, workspace, env), skills: SKILLS, goal: goal(skillsList, node, SKILLS_LIST_BOUND) },
        runs: ROUNDS - 1,
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
