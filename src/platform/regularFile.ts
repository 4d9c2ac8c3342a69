/**
 * Opening a path that something else may have replaced (a kernel can plant a FIFO, a device link or
 * a symbolic link wherever it writes) so that the open never blocks and only a regular file is
 * ever read, then reading it through the descriptor.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, type BigIntStats } from "node:fs";
import { fileKind } from "./boundedRead.js";

/** An open regular file: its descriptor (the caller closes it, see closeQuietly) and its fstat at open. */
export interface OpenedFile {
  readonly fd: number;
  readonly stats: BigIntStats;
}

/** What openRegularFile found at a path it could look at. */
export type RegularOpen =
  | ({ readonly kind: "file" } & OpenedFile)
  /** `what` names the thing, for messages: "a FIFO", "a directory", "a symbolic link"... */
  | { readonly kind: "not_regular_file"; readonly what: string };

export interface OpenRegularOptions {
  /** Refuse a symbolic link as the last component instead of following it: for a path already resolved. */
  readonly noFollow?: boolean;
}

/**
 * Opens `path` read-only when it is a regular file: stat first (opening a device can act on it),
 * then open with O_NONBLOCK (a FIFO swapped in after the stat must not block the open; O_NOFOLLOW
 * too with `noFollow`), then fstat the descriptor, which is what gets read. Anything but a regular
 * file is answered as `not_regular_file`, with no descriptor left open. Throws the fs error of the
 * stat or the open (ENOENT, ELOOP, EACCES...).
 */
export function openRegularFile(path: string, options: OpenRegularOptions = {}): RegularOpen {
  const before = options.noFollow ? lstatSync(path, { bigint: true }) : statSync(path, { bigint: true });
  if (!before.isFile()) return notRegular(before);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (options.noFollow ? constants.O_NOFOLLOW : 0));
  let stats: BigIntStats;
  try {
    stats = fstatSync(fd, { bigint: true });
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
  if (stats.isFile()) return { kind: "file", fd, stats };
  closeQuietly(fd);
  return notRegular(stats);
}

function notRegular(stats: BigIntStats): RegularOpen {
  return { kind: "not_regular_file", what: stats.isSymbolicLink() ? "a symbolic link" : fileKind(stats) };
}

/** Reads up to `length` bytes at `position` of `fd`; returns fewer only at end of file. */
export function readAt(fd: number, position: number, length: number): Buffer {
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
