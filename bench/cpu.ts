/**
 * CPU time (user + system) and context switches of processes and threads, from /proc (Linux):
 * where a busy run's work went, and how often each thread slept and woke. /proc counts CPU in
 * clock ticks of 10 ms (USER_HZ is 100 on Linux), fine enough over thousands of calls.
 */
import { readFileSync, readdirSync } from "node:fs";
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

/** A thread's context switches: voluntary (it blocked, so each is one sleep and one wake-up) and involuntary (it was preempted). */
export interface Switches { voluntary: number; involuntary: number }

/**
 * Context switches of every thread of the processes `pids`, summed by thread role: a process's
 * main thread counts as "<its name> main", any other thread under its own name (ZeroMQ's I/O
 * threads are "ZMQbg/IO/0"). Threads and processes gone meanwhile are left out.
 */
export function threadSwitches(pids: readonly number[]): Map<string, Switches> {
  const roles = new Map<string, Switches>();
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone
    }
    for (const tid of tids) {
      const status = readStatus(`/proc/${pid}/task/${tid}/status`);
      if (status === undefined) continue;
      const role = Number(tid) === pid ? `${status.name} main` : status.name;
      const sum = roles.get(role) ?? { voluntary: 0, involuntary: 0 };
      roles.set(role, { voluntary: sum.voluntary + status.voluntary, involuntary: sum.involuntary + status.involuntary });
    }
  }
  return roles;
}

/** Each role's switches between two readings of threadSwitches, per `calls`, to two decimals; roles whose counts both round to zero are left out. */
export function switchesPerCall(before: Map<string, Switches>, after: Map<string, Switches>, calls: number): Record<string, Switches> {
  const per = (grew: number) => Math.round((grew / calls) * 100) / 100;
  const out: Record<string, Switches> = {};
  for (const [role, now] of after) {
    const then = before.get(role) ?? { voluntary: 0, involuntary: 0 };
    const grew = { voluntary: per(now.voluntary - then.voluntary), involuntary: per(now.involuntary - then.involuntary) };
    if (grew.voluntary > 0 || grew.involuntary > 0) out[role] = grew;
  }
  return out;
}

function readStatus(path: string): ({ name: string } & Switches) | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined; // gone since readdir
  }
  const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(text)?.[1];
  const [name, voluntary, involuntary] = [field("Name"), field("voluntary_ctxt_switches"), field("nonvoluntary_ctxt_switches")];
  if (name === undefined || voluntary === undefined || involuntary === undefined) return undefined;
  return { name, voluntary: Number(voluntary), involuntary: Number(involuntary) };
}
