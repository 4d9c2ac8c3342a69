import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { goalsChart } from "../../bench/chart.js";
import { cpuDuring, mainThreadCpuMs, processCpuMs, switchesPerCall, threadSwitches, treeCpuMs } from "../../bench/cpu.js";
import { goal, goalsIn, limitGoal, targetBound } from "../../bench/goals.js";
import { installDir } from "../../src/platform/index.js";

const run = promisify(execFile);
/** The quick benches (files and images in memory, no kernel): enough to prove the runner's output shape. */
const QUICK = ["discovery_128_skills", "reads_1000_small", "images"];
/** Liveness bound for the quick benches: far above their expected second or two. */
const QUICK_BENCH_TIMEOUT_MS = 120_000;

describe("bench output: one JSON document, a ratio and a target for each measure, a chart of the goals", () => {
  it("the runner prints one JSON document on stdout and its progress on stderr; each quick measure carries ratio, target and met", async () => {
    const { stdout, stderr } = await run(process.execPath, [join(installDir(), "dist", "bench", "run.js"), ...QUICK], { timeout: QUICK_BENCH_TIMEOUT_MS });
    const report = JSON.parse(stdout) as { node: string; results: Record<string, unknown> };
    expect(report.node).toBe(process.version);
    expect(Object.keys(report.results)).toEqual(QUICK);
    expect(goalsIn(report.results).map((g) => g.name)).toEqual(["discovery_128_skills", "reads_1000_small", "images.step_ms"]);
    for (const { goal: found } of goalsIn(report.results)) {
      expect(found.ratio).toBeGreaterThan(0);
      expect(targetBound(found.target)).toBeGreaterThan(0);
      expect(found.met).toBe(found.ratio <= targetBound(found.target));
    }
    expect(stderr).toContain("bench: reads_1000_small...");
  }, QUICK_BENCH_TIMEOUT_MS);

  it("a goal is its value over the baseline held to a bound; an absolute goal is a ratio to its limit", () => {
    expect(goal(6, 12, 0.5)).toEqual({ ratio: 0.5, target: "<= 0.5", met: true });
    expect(goal(7, 12, 0.5)).toMatchObject({ ratio: 0.583, met: false });
    expect(limitGoal(88, 50)).toEqual({ ratio: 1.76, target: "<= 1", met: false, target_value: 50 });
    expect(targetBound("<= 1.5")).toBe(1.5);
    expect(targetBound("fast")).toBeNaN();
  });

  it("finds every goal in a result tree by its dotted path, and draws one bar each, red when missed", () => {
    const results = {
      kernel: { execute: { median_ms: 6, ...goal(6, 12, 0.5), timeline: { total: 5 } }, reload: limitGoal(88, 50) },
      info: { note: "no goal here", ratio: 3 },
    };
    expect(goalsIn(results).map((g) => g.name)).toEqual(["kernel.execute", "kernel.reload"]);
    const svg = goalsChart(results, "test machine");
    expect(svg.match(/<rect x="\d+" y=/g)).toHaveLength(2);
    expect(svg).toContain("kernel.execute");
    expect(svg).toContain('fill="#2e7d32">0.50 (goal &lt;= 0.5)');
    expect(svg).toContain('fill="#c62828">1.76 (goal &lt;= 1)');
    expect(svg).toContain("test machine");
  });
});

describe("bench CPU accounting from /proc", () => {
  it("cpuDuring gives the body's result and how much each probe grew meanwhile", async () => {
    let a = 5;
    let b = 100;
    const run = await cpuDuring({ a: () => a, b: () => b }, async () => {
      a += 3;
      b += 40;
      return "done";
    });
    expect(run).toEqual({ result: "done", cpuMs: { a: 3, b: 40 } });
  });

  it("reads a process's CPU, its main thread's share, and a whole tree's; a gone pid reads 0", async () => {
    // A shell (it stays the parent: a command follows) whose child spins for a second of CPU, then waits for its stdin to close.
    const spinner = "const end = process.cpuUsage().user + 1e6; while (process.cpuUsage().user < end); process.stdout.write('spun'); process.stdin.resume();";
    const shell = spawn("sh", ["-c", `"${process.execPath}" -e "${spinner}"; exit 0`], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      await once(shell.stdout!, "data");
      expect(processCpuMs(shell.pid!)).toBeLessThan(500);
      expect(treeCpuMs(shell.pid!)).toBeGreaterThanOrEqual(900);
    } finally {
      shell.stdin!.end();
      await once(shell, "exit");
    }
    expect(processCpuMs(shell.pid!)).toBe(0);
    expect(mainThreadCpuMs(process.pid)).toBeGreaterThan(0);
    expect(mainThreadCpuMs(process.pid)).toBeLessThanOrEqual(processCpuMs(process.pid));
  }, 30_000);

  it("counts each thread's context switches by role: a main thread that sleeps 50 times in a row switches about once per sleep", async () => {
    // A node process that, told to, blocks its main thread 50 times for 2 ms each, then waits for its stdin to close.
    const sleeper = "process.stdout.write('ready'); process.stdin.once('data', () => { const cell = new Int32Array(new SharedArrayBuffer(4)); for (let i = 0; i < 50; i++) Atomics.wait(cell, 0, 0, 2); process.stdout.write('slept'); });";
    const child = spawn(process.execPath, ["-e", sleeper], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      await once(child.stdout!, "data");
      const before = threadSwitches([child.pid!]);
      expect(before.get("node main")?.voluntary).toBeGreaterThan(0);
      child.stdin!.write("go");
      await once(child.stdout!, "data");
      const grew = switchesPerCall(before, threadSwitches([child.pid!]), 50);
      // Nearly every sleep yields the CPU; on a loaded machine a wait can find its time already up, so one in ten may not.
      expect(grew["node main"]!.voluntary).toBeGreaterThanOrEqual(0.9);
      // Roles that did not move are left out rather than shown as zero.
      expect(Object.values(grew).every((s) => s.voluntary > 0 || s.involuntary > 0)).toBe(true);
    } finally {
      child.stdin!.end();
      await once(child, "exit");
    }
    expect(threadSwitches([child.pid!]).size).toBe(0);
  }, 30_000);
});
