import { closeSync, constants, fstatSync, openSync, readSync, statSync, type BigIntStats } from "node:fs";
import { fileKind } from "../platform/index.js";

/** A path that resolves to something other than a regular file; local, mapped to a wire code by callers. */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";
  constructor(readonly path: string, readonly kind: string) {
    super(`${path} is ${kind}, not a regular file`);
  }
}

/** An open regular file (a descriptor the caller must close) and its identity/size at open time. */
export interface OpenedFile {
  readonly fd: number;
  readonly stats: BigIntStats;
}

/**
 * Opens a path (following links) only if it is a regular file; returns the descriptor and its fstat.
 * Throws NotRegularFileError for anything else, or the fs error (ENOENT, ELOOP, EACCES, ...).
 * Synchronous: a few local syscalls cost less than one thread-pool round trip (see docs/skills.md).
 */
export function openRegular(path: string): OpenedFile {
  // Stat before open: opening a FIFO or a device can block, stream forever, or act on the device.
  const before = statSync(path, { bigint: true });
  if (!before.isFile()) throw new NotRegularFileError(path, fileKind(before));
  // O_NONBLOCK keeps open() from blocking if a FIFO was swapped in after the stat.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    return { fd, stats };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Reads up to `length` bytes at `position`; returns fewer only at end of file. */
export function readRange(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const bytesRead = readSync(fd, buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

/** Closes a descriptor; a failed close of a read-only file loses nothing. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing was written through it
  }
}
