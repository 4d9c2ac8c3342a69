/**
 * Proportional set size of a process tree, from /proc/<pid>/smaps_rollup (Linux): each shared page
 * counts for the share of it this process holds, so kernels sharing libpython do not each count it
 * whole, as RSS would.
 */
import { readFileSync, readdirSync } from "node:fs";

/** PSS of one process in KiB; undefined when it is gone or unreadable. */
export function pssKb(pid: number): number | undefined {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const match = /^Pss:\s+(\d+) kB$/m.exec(rollup);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Parent pid of every live process, read once. */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // The command name may hold spaces and parentheses: fields start after the last ")".
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parentOf.set(Number(name), Number(fields[1]));
    } catch {
      // gone since readdir
    }
  }
  return parentOf;
}

/** `pid` and every process below it. */
export function processTree(pid: number): number[] {
  const parentOf = parents();
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    for (const [child, parent] of parentOf) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}

/** PSS of `pid` and its descendants together, in MiB. */
export function treePssMb(pid: number): number {
  return processTree(pid).reduce((sum, member) => sum + (pssKb(member) ?? 0), 0) / 1024;
}

/** Resident memory of `pid` now and at its peak (VmRSS, VmHWM), in MiB, whole. */
export function processMemoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mib = (field: string) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1]) / 1024);
  return { rss: mib("VmRSS"), peak: mib("VmHWM") };
}
