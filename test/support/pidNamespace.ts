import { readdirSync, readFileSync } from "node:fs";

/**
 * A command prefix that runs a program in a pid namespace of its own (bubblewrap, as the sandbox
 * uses): it sees its own pids and /proc, and no process outside can be found by the pid it writes
 * down, as with two containers that share a home directory. It dies with the process that spawned it.
 */
export const OWN_PID_NAMESPACE: readonly string[] = ["bwrap", "--die-with-parent", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--"];

/** Every live descendant of `pid` (as this process numbers them), children before their own children. */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const parent = queue.shift()!;
    for (const task of tasksOf(parent)) {
      const children = readFileSync(`/proc/${parent}/task/${task}/children`, "utf8").trim();
      for (const child of children === "" ? [] : children.split(" ").map(Number)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

function tasksOf(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
}
