/**
 * Opening a path that something else may have replaced (a kernel can plant a FIFO, a device link or
 * a symbolic link wherever it writes) so that the open never blocks and only a regular file is
 * ever read, then reading it through the descriptor.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, type BigIntStats } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileKind } from "./boundedRead.js";

/**
 * How long after its last change a file may still be in the middle of a write. A write moves
 * ctime when it starts, so one already under way when the first fstat is taken leaves the stamps
 * before and after a read alike while the read sees part of it; file times also tick in steps
 * (a jiffy, a few ms, where the kernel does not refine them), so two writes close together can
 * share one. Both fit well inside this on a local disk.
 */
export const FILE_WRITE_SETTLE_MS = 50;

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

/** The file changed while it was read, twice in a row; local, mapped to a wire code by callers. */
export class FileMovedError extends Error {
  override readonly name = "FileMovedError";
  constructor() {
    super("the file changed while it was read, twice in a row");
  }
}

/** What one look at an open file found. `stats`: the last fstat taken, whose stamp a retry must see again. */
type Attempt<T> =
  | { readonly kind: "steady"; readonly value: T; readonly stats: BigIntStats }
  | { readonly kind: "unsettled"; readonly stats: BigIntStats; readonly waitMs: number }
  | { readonly kind: "moved"; readonly stats: BigIntStats };

/**
 * `read(stats)` of an open file, kept only when the file stood still around it: its ctime was at
 * least FILE_WRITE_SETTLE_MS old before, and the fstat after shows the same size, mtime and ctime
 * (nanoseconds). Otherwise it waits until the file would have settled and tries once more; a
 * change seen again throws (or rejects with) FileMovedError. Synchronous when the first try holds.
 * Takes the descriptor: it is closed once done, either way. Throws what `read` throws.
 */
export function readSteady<T>(file: OpenedFile, read: (stats: BigIntStats) => T, now: () => number = Date.now): T | Promise<T> {
  let first: Attempt<T>;
  try {
    // The fstat taken at the open is the first look: one system call fewer on the common path.
    first = attempt(file.fd, read, now, file.stats);
  } catch (error) {
    closeQuietly(file.fd);
    throw error;
  }
  if (first.kind === "steady") {
    closeQuietly(file.fd);
    return first.value;
  }
  return retry(file.fd, read, now, first.stats).finally(() => closeQuietly(file.fd));
}

/** The second try: after waiting for the file as last seen (`seen`) to settle; any change to it since is final. */
async function retry<T>(fd: number, read: (stats: BigIntStats) => T, now: () => number, seen: BigIntStats): Promise<T> {
  for (;;) {
    // Again while unchanged: a timer may fire a little before the wall clock says the time has come.
    await sleep(Math.max(1, unsettledFor(seen, now())));
    const next = attempt(fd, read, now);
    if (next.kind === "steady" && !moved(seen, next.stats)) return next.value;
    if (next.kind !== "unsettled" || moved(seen, next.stats)) throw new FileMovedError();
  }
}

function attempt<T>(fd: number, read: (stats: BigIntStats) => T, now: () => number, before = fstatSync(fd, { bigint: true })): Attempt<T> {
  const waitMs = unsettledFor(before, now());
  if (waitMs > 0) return { kind: "unsettled", stats: before, waitMs };
  const value = read(before);
  const after = fstatSync(fd, { bigint: true });
  return moved(before, after) ? { kind: "moved", stats: after } : { kind: "steady", value, stats: after };
}

/** Whether `after` shows a change since `before` (same descriptor, so the same file): size, mtime or ctime. */
function moved(before: BigIntStats, after: BigIntStats): boolean {
  return after.size !== before.size || after.mtimeNs !== before.mtimeNs || after.ctimeNs !== before.ctimeNs;
}

/** Milliseconds until the file counts as settled; 0 when it already does, or when its ctime is ahead of the clock (a skewed mount, which would never settle). */
function unsettledFor(stats: BigIntStats, nowMs: number): number {
  const changedMs = Number(stats.ctimeNs / 1_000_000n);
  if (changedMs > nowMs) return 0;
  return Math.max(0, changedMs + FILE_WRITE_SETTLE_MS - nowMs);
}
