/**
 * Finding the kernel inside a running sandbox. bwrap does not forward signals: SIGINT sent to the
 * bwrap process kills the whole sandbox. The process tree is bwrap (the spawned pid) -> bwrap as
 * pid 1 of the new pid namespace -> the command, so a signal meant for the kernel goes to the
 * grandchild.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Child pids of `pid`, from /proc (empty when it has none or is gone). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return scanChildren(pid);
  }
}

function scanChildren(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      continue;
    }
  }
  return out;
}

/** The host pid of the command a sandbox runs, given the pid of the spawned bwrap; undefined before it started or after it ended. */
export function sandboxedPid(bwrapPid: number): number | undefined {
  const init = childPids(bwrapPid);
  if (init.length !== 1) return undefined;
  const inner = childPids(init[0]!);
  return inner.length === 1 ? inner[0] : undefined;
}

/** Sends `signal` to the sandboxed command (not to bwrap); returns false when it could not be found. */
export function signalSandboxed(bwrapPid: number, signal: NodeJS.Signals): boolean {
  const pid = sandboxedPid(bwrapPid);
  if (pid === undefined) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
