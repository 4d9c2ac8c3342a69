import { openRegularFile, type OpenedFile } from "../platform/index.js";

/** A path that resolves to something other than a regular file; local, mapped to a wire code by callers. */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";
  constructor(readonly path: string, readonly kind: string) {
    super(`${path} is ${kind}, not a regular file`);
  }
}

/**
 * Opens a path (following links) only if it is a regular file, never blocking (see openRegularFile);
 * returns the descriptor and its fstat. Throws NotRegularFileError for anything else, or the fs
 * error (ENOENT, ELOOP, EACCES, ...). Synchronous: a few local syscalls cost less than one
 * thread-pool round trip (see docs/skills.md).
 */
export function openRegular(path: string): OpenedFile {
  const opened = openRegularFile(path);
  if (opened.kind === "not_regular_file") throw new NotRegularFileError(path, opened.what);
  return { fd: opened.fd, stats: opened.stats };
}
