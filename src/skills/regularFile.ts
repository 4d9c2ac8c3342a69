import { constants, type BigIntStats } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { fileKind } from "./files.js";

/** A path that resolves to something other than a regular file; local, mapped to a wire code by callers. */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";
  constructor(readonly path: string, readonly kind: string) {
    super(`${path} is ${kind}, not a regular file`);
  }
}

/** An open regular file and its identity/size at open time. */
export interface OpenedFile {
  readonly handle: FileHandle;
  readonly stats: BigIntStats;
}

/**
 * Opens a path (following links) only if it is a regular file; returns the handle and its fstat.
 * `statted` is a stat of `path` the caller already started, so it can overlap other work.
 * Throws NotRegularFileError for anything else, or the fs error (ENOENT, ELOOP, EACCES, ...).
 */
export async function openRegular(path: string, statted?: Promise<BigIntStats>): Promise<OpenedFile> {
  // Stat before open: opening a FIFO or a device can block, stream forever, or act on the device.
  const before = await (statted ?? stat(path, { bigint: true }));
  if (!before.isFile()) throw new NotRegularFileError(path, fileKind(before));
  // O_NONBLOCK keeps open() from blocking if a FIFO was swapped in after the stat.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat({ bigint: true });
    if (!stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads up to `length` bytes at `position`; returns fewer only at end of file. */
export async function readRange(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}
