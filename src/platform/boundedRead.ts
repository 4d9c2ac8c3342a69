import { constants, type BigIntStats, type Stats } from "node:fs";
import { open } from "node:fs/promises";

/** What readFileBounded found at a path it could open. */
export type BoundedRead =
  | { readonly kind: "file"; readonly bytes: Buffer }
  /** `what` names the thing, for messages: "a directory", "a FIFO"... */
  | { readonly kind: "not_regular_file"; readonly what: string }
  /** `size` is the file's size, or the bytes read when it grew past the bound while read. */
  | { readonly kind: "oversize"; readonly size: number };

/** Names the kind of a non-regular file for messages. */
export function fileKind(stats: Stats | BigIntStats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * The whole content of the regular file at `path` when it holds at most `maxBytes`; a larger file
 * is refused, never cut. The open never blocks (O_NONBLOCK: a FIFO planted at the path must not
 * hang the caller) and nothing but a regular file is read. Throws the fs error of the open or the
 * read (ENOENT, EACCES, ELOOP...).
 */
export async function readFileBounded(path: string, maxBytes: number): Promise<BoundedRead> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { kind: "not_regular_file", what: fileKind(stats) };
    if (stats.size > maxBytes) return { kind: "oversize", size: stats.size };
    const buffer = Buffer.alloc(maxBytes + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled > maxBytes) return { kind: "oversize", size: filled };
    }
    return { kind: "file", bytes: buffer.subarray(0, filled) };
  } finally {
    await handle.close();
  }
}
