/**
 * Whether any process holds a file open, read from /proc/<pid>/fd (only the processes this user
 * may look into: every albedo process of the user is among them).
 */
import { readdirSync, readlinkSync, statSync } from "node:fs";

/** Processes looked at, at most; past it the answer is "held" (the safe reading). */
export const MAX_HOLDER_PROCESSES = 32_768;
/** Descriptors looked at across all processes, at most; past it the answer is "held". */
export const MAX_HOLDER_DESCRIPTORS = 1_048_576;

/** A file by its identity and the path it was at. */
export interface FileIdentity {
  readonly path: string;
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * True when some process has a descriptor open on `file` (the same device and inode, opened at its
 * path), or when that cannot be told: no /proc, or the bounds above passed.
 */
export function isHeldOpen(file: FileIdentity): boolean {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  if (pids.length > MAX_HOLDER_PROCESSES) return true;
  let seen = 0;
  for (const pid of pids) {
    const fds = descriptorsOf(pid);
    seen += fds.length;
    if (seen > MAX_HOLDER_DESCRIPTORS) return true;
    if (fds.some((fd) => holds(`/proc/${pid}/fd/${fd}`, file))) return true;
  }
  return false;
}

function descriptorsOf(pid: string): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`);
  } catch {
    // Gone, or another user's: not one of ours.
    return [];
  }
}

/** The link names the path first (cheap); only then is the inode compared. */
function holds(link: string, file: FileIdentity): boolean {
  try {
    if (readlinkSync(link) !== file.path) return false;
    const info = statSync(link, { bigint: true });
    return info.dev === file.dev && info.ino === file.ino;
  } catch {
    return false;
  }
}
