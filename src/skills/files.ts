import { constants, type BigIntStats } from "node:fs";
import { lstat, open, realpath, stat } from "node:fs/promises";
import { fileKind } from "../platform/index.js";
import { UNSETTLED_FILE_MS } from "./limits.js";
import type { FileIdentity, Problem } from "./types.js";

/** A regular file read through any links, at most `maxBytes` of it. */
export interface BoundedFile {
  readonly resolvedPath: string;
  readonly identity: FileIdentity;
  /** Size reported by fstat when the file was opened. */
  readonly size: number;
  /** That fstat: the identity and stamp of the file the bytes were read from. */
  readonly stats: BigIntStats;
  /** The first min(size, maxBytes) bytes. */
  readonly bytes: Buffer;
  readonly truncated: boolean;
}

/** The result of looking at a path through its links: what it is, or why it could not be looked at. */
export type PathProbe =
  | { readonly kind: "missing" }
  | { readonly kind: "problem"; readonly problem: Problem }
  | { readonly kind: "found"; readonly stats: BigIntStats };

/**
 * What must be unchanged for a file's bytes to be taken as unchanged: identity, size, mtime and
 * ctime (nanoseconds). Any write moves ctime, which no user can set; see hasSettled for when two
 * writes can still share one.
 */
export function fileStamp(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/** Whether the file was last changed more than UNSETTLED_FILE_MS before `nowMs`, so its stamp can be trusted. */
export function hasSettled(stats: BigIntStats, nowMs: number): boolean {
  return nowMs >= settlesAt(stats);
}

/** The first wall-clock ms at which a file with these stats counts as settled: UNSETTLED_FILE_MS after its ctime's millisecond. */
export function settlesAt(stats: BigIntStats): number {
  return Number(stats.ctimeNs / 1_000_000n) + UNSETTLED_FILE_MS + 1;
}

/** (dev, ino) of a stat result, as strings because inode numbers can exceed 2^53. */
export function identityOf(stats: BigIntStats): FileIdentity {
  return { dev: stats.dev.toString(), ino: stats.ino.toString() };
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String((error as { code: unknown }).code) : undefined;
}

/** Maps a filesystem error on `path` to a stable diagnostic problem. */
export function fsProblem(error: unknown, path: string): Problem {
  const code = errorCode(error);
  if (code === "ELOOP") return { code: "link_cycle", message: `${path}: symbolic links form a cycle` };
  if (code === "ENOENT") return { code: "broken_link", message: `${path}: symbolic link points at nothing` };
  if (code === "EACCES" || code === "EPERM") return { code: "unreadable", message: `${path}: permission denied` };
  if (code === "ENOTDIR") return { code: "unreadable", message: `${path}: a path component is not a directory` };
  return { code: "unreadable", message: `${path}: ${error instanceof Error ? error.message : String(error)}` };
}

/** Stats `path` following links; a path that does not exist at all (not even as a link) is "missing". */
export async function probe(path: string): Promise<PathProbe> {
  try {
    return { kind: "found", stats: await stat(path, { bigint: true }) };
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") {
      const dangling = await lstat(path).then(
        (s) => s.isSymbolicLink(),
        () => false,
      );
      if (!dangling) return { kind: "missing" };
    }
    return { kind: "problem", problem: fsProblem(error, path) };
  }
}

/**
 * Reads at most `maxBytes` of the regular file at `path` (links followed). Non-regular files are
 * refused before any read and the open never blocks (O_NONBLOCK). Returns a problem instead of throwing.
 */
export async function readBoundedFile(path: string, maxBytes: number): Promise<BoundedFile | Problem> {
  let handle;
  try {
    const before = await stat(path, { bigint: true });
    if (!before.isFile()) return { code: "not_regular_file", message: `${path} is ${fileKind(before)}, not a regular file` };
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stats = await handle.stat({ bigint: true });
    if (!stats.isFile()) return { code: "not_regular_file", message: `${path} is ${fileKind(stats)}, not a regular file` };
    const size = Number(stats.size);
    const buffer = Buffer.alloc(Math.min(size, maxBytes));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    const resolvedPath = await realpath(path);
    return { resolvedPath, identity: identityOf(stats), size, stats, bytes: buffer.subarray(0, filled), truncated: size > maxBytes };
  } catch (error) {
    return fsProblem(error, path);
  } finally {
    await handle?.close();
  }
}

/** True when a value returned by readBoundedFile is a problem rather than a file. */
export function isProblem(value: BoundedFile | Problem): value is Problem {
  return "code" in value;
}
