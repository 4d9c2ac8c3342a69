/**
 * CPU time (user + system) of processes and threads, from /proc (Linux): where a busy run's work
 * went. /proc counts in clock ticks of 10 ms (USER_HZ is 100 on Linux), fine enough over
 * thousands of calls.
 */
import { readFileSync } from "node:fs";
import { processTree } from "./pss.js";

const TICK_MS = 10;

/** utime + stime of a /proc stat file in ms; 0 when the process or thread is gone. */
function statCpuMs(path: string): number {
  try {
    const stat = readFileSync(path, "utf8");
    // The command name may hold spaces and parentheses: fields start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** CPU of a whole process (every thread), in ms. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU of a process's main thread alone, in ms. */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/** CPU of `pid` and every process below it, in ms. */
export function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, member) => sum + processCpuMs(member), 0);
}

/** Runs `body` and returns its result with the CPU each probe's reading grew by meanwhile, in ms. */
export async function cpuDuring<T, K extends string>(probes: Record<K, () => number>, body: () => Promise<T>): Promise<{ result: T; cpuMs: Record<K, number> }> {
  const names = Object.keys(probes) as K[];
  const before = names.map((name) => probes[name]());
  const result = await body();
  const cpuMs = Object.fromEntries(names.map((name, i) => [name, probes[name]() - before[i]!])) as Record<K, number>;
  return { result, cpuMs };
}
