import { readFileSync } from "node:fs";

/**
 * True when a process with this pid runs (ours or another user's); used to find stale locks and
 * temps, and processes a session follows. A zombie does not run: it has exited and only waits for
 * its parent to reap it, which may take long (a notebook server reaps its kernels' launchers late).
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const state = statFields(pid)?.[0];
  return state !== "Z" && state !== "X";
}

/**
 * The fields of /proc/<pid>/stat from the third (the state) on, or undefined where that cannot be
 * read (no /proc, no such process, hidden). The command name (field 2) is in parentheses and may
 * hold spaces and ")"; the fields after it follow the last ")".
 */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * A process as a pid file records it: the pid and, where the system tells it, the process's start
 * time, so that a later process given the same pid (a restarted container, pid reuse) is not taken
 * for it. snake_case because it is written to files as is.
 */
export interface ProcessIdentity {
  readonly pid: number;
  /** Clock ticks after boot at which the process started (field 22 of /proc/<pid>/stat); absent where there is no /proc. */
  readonly start_time?: string;
}

/** When process `pid` started (field 22 of /proc/<pid>/stat), or undefined where that cannot be read (no /proc, no such process, hidden). */
export function processStartTime(pid: number): string | undefined {
  const field = statFields(pid)?.[22 - 3];
  return field !== undefined && /^\d+$/.test(field) ? field : undefined;
}

/** The identity of running process `pid`, to record now and check later with isSameProcessAlive. */
export function processIdentity(pid: number): ProcessIdentity {
  const startTime = processStartTime(pid);
  return { pid, ...(startTime === undefined ? {} : { start_time: startTime }) };
}

/** The identity a parsed pid file holds (`{"pid", "start_time"?}`), or undefined when it names no pid. */
export function processIdentityOf(value: unknown): ProcessIdentity | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { pid, start_time: startTime } = value as { pid?: unknown; start_time?: unknown };
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return { pid, ...(typeof startTime === "string" ? { start_time: startTime } : {}) };
}

/** This process's identity, to write into a pid file. */
export function currentProcess(): ProcessIdentity {
  return processIdentity(process.pid);
}

/**
 * True while the recorded process still runs: its pid is alive and, when both the record and the
 * system give a start time, they match. Without a start time on either side only the pid counts.
 */
export function isSameProcessAlive(identity: ProcessIdentity): boolean {
  if (!isProcessAlive(identity.pid)) return false;
  if (identity.start_time === undefined) return true;
  const now = processStartTime(identity.pid);
  return now === undefined || now === identity.start_time;
}
