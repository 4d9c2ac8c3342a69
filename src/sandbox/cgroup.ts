/**
 * A best-effort process cap through the cgroup `pids` controller. RLIMIT_NPROC does not bind a
 * host root user (the kernel exempts uid 0 even inside a user namespace), so when the runtime may
 * create a child cgroup (cgroup v1 `pids` hierarchy, or v2 with `pids` already delegated) the
 * sandbox joins one whose `pids.max` holds for root too. When it may not, the cap is absent and
 * callers say so.
 */
import { randomUUID } from "node:crypto";
import { accessSync, constants, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Root of the cgroup filesystems. */
export const CGROUP_ROOT = "/sys/fs/cgroup";
/** How long dispose() keeps trying to remove the cgroup after killing its members. */
export const CGROUP_REMOVE_TIMEOUT_MS = 3_000;
/** Pause between removal attempts while killed members are reaped. */
export const CGROUP_REMOVE_POLL_MS = 50;

export interface PidsCgroup {
  readonly dir: string;
  /** Prefix that moves the process into the cgroup, then execs the rest of the argv. */
  readonly joinArgv: readonly string[];
  /** Kills every member and removes the cgroup; resolves even when removal fails. */
  dispose(): Promise<void>;
}

/** The directory under which this process may create a pids cgroup, or a reason why there is none. */
function pidsParent(): { dir: string } | { reason: string } {
  let lines: string[];
  try {
    lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  } catch {
    return { reason: "no /proc/self/cgroup" };
  }
  const v1 = lines.map((l) => l.split(":")).find((f) => f.length >= 3 && f[1]!.split(",").includes("pids"));
  if (v1) return { dir: join(CGROUP_ROOT, "pids", v1.slice(2).join(":")) };
  const v2 = lines.map((l) => l.split(":")).find((f) => f[0] === "0" && f[1] === "");
  if (!v2) return { reason: "no pids cgroup controller" };
  const dir = join(CGROUP_ROOT, v2.slice(2).join(":"));
  try {
    if (!readFileSync(join(dir, "cgroup.subtree_control"), "utf8").split(/\s+/).includes("pids")) {
      return { reason: "the pids controller is not delegated to this cgroup" };
    }
  } catch {
    return { reason: "cgroup v2 subtree_control is unreadable" };
  }
  return { dir };
}

/** Creates a cgroup capped at `maxPids`; returns it, or a reason string when that is not possible here. */
export function createPidsCgroup(maxPids: number): PidsCgroup | string {
  const parent = pidsParent();
  if ("reason" in parent) return parent.reason;
  const dir = join(parent.dir, `albedo-${process.pid}-${randomUUID().slice(0, 8)}`);
  try {
    accessSync(parent.dir, constants.W_OK);
    mkdirSync(dir);
  } catch (error) {
    return `cannot create a cgroup under ${parent.dir} (${(error as Error).message})`;
  }
  try {
    writeFileSync(join(dir, "pids.max"), String(maxPids));
  } catch (error) {
    rmdirSync(dir);
    return `cannot set pids.max in ${dir} (${(error as Error).message})`;
  }
  const procs = join(dir, "cgroup.procs");
  const script = 'echo $$ > "$1" || { echo "sandbox: cannot join cgroup $1" >&2; exit 126; }; shift; exec "$@"';
  return { dir, joinArgv: ["/bin/sh", "-c", script, "albedo-sandbox", procs], dispose: () => removeCgroup(dir) };
}

function members(dir: string): number[] {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function removeCgroup(dir: string): Promise<void> {
  const deadline = Date.now() + CGROUP_REMOVE_TIMEOUT_MS;
  for (;;) {
    for (const pid of members(dir)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    try {
      rmdirSync(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || Date.now() > deadline) return;
    }
    await new Promise((resolve) => setTimeout(resolve, CGROUP_REMOVE_POLL_MS));
  }
}
