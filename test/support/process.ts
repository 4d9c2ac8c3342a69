import { existsSync, readFileSync } from "node:fs";

/**
 * Whether process `pid` still runs: it exists (ours or, EPERM, another user's) and is not a zombie
 * waiting to be reaped, which has already stopped running.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The state is the field after the command name, which is in parentheses and may hold ")".
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    // Gone since kill(0) found it; or, on a system without /proc, alive as kill(0) said.
    return !existsSync("/proc/self");
  }
}
