import { chmodSync, closeSync, fchmodSync, fstatSync, lstatSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { LOG_ROTATIONS_KEPT, MAX_LOG_FILE_BYTES } from "./limits.js";
import { PRIVATE_FILE_MODE } from "../platform/index.js";

export interface LogFileOptions {
  readonly maxBytes?: number;
  readonly keep?: number;
}

/**
 * An append-only log file, mode 0600 (it names workspaces and errors), that never throws: a failed write (full disk, a file that vanished, a
 * directory that is not there) is counted and the text dropped; the next write tries again, so
 * the log resumes once space returns. Before a write would take the file past `maxBytes` it is
 * rotated: `file.(n-1)` -> `file.n` .. `file` -> `file.1`, the oldest beyond `keep` deleted. Writes
 * are synchronous: entries land in order, and a crash right after one does not lose it.
 */
export class LogFile {
  private fd: number | undefined;
  private size = 0;
  /** A write failed halfway: the next entry starts on a fresh line. */
  private torn = false;
  /** Only a regular file is rotated: renaming a device given as the log (/dev/null) would break the system. */
  private rotatable = false;
  private readonly maxBytes: number;
  private readonly keep: number;

  constructor(
    readonly path: string,
    private readonly onDropped: (error: unknown) => void,
    options: LogFileOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? MAX_LOG_FILE_BYTES;
    this.keep = options.keep ?? LOG_ROTATIONS_KEPT;
  }

  /** Appends `text`; true when it was written whole, false when it was dropped (and counted). */
  append(text: string): boolean {
    const bytes = Buffer.from(this.torn ? `\n${text}` : text);
    try {
      const fd = this.fd ?? this.open();
      if (this.rotatable && this.size > 0 && this.size + bytes.length > this.maxBytes) return this.rotate() && this.append(text);
      this.writeAll(fd, bytes);
      return true;
    } catch (error) {
      this.onDropped(error);
      return false;
    }
  }

  /** Closes the file; a later append opens it again. Never throws. */
  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Nothing is lost: every write already went to the kernel.
    }
    this.fd = undefined;
  }

  private writeAll(fd: number, bytes: Buffer): void {
    let offset = 0;
    try {
      while (offset < bytes.length) {
        const written = writeSync(fd, bytes, offset);
        if (written === 0) throw new Error(`no progress writing ${this.path}`);
        offset += written;
        this.size += written;
      }
    } finally {
      if (offset > 0) this.torn = offset < bytes.length;
    }
  }

  private open(): number {
    const fd = openSync(this.path, "a", PRIVATE_FILE_MODE);
    try {
      const found = fstatSync(fd);
      // A log created under a loose umask, or by an older launcher's redirect, is made private
      // here; a device given as the log (/dev/full, /dev/null) is not ours to change.
      if (found.isFile() && (found.mode & 0o777) !== PRIVATE_FILE_MODE) fchmodSync(fd, PRIVATE_FILE_MODE);
      this.size = found.size;
      this.rotatable = found.isFile();
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    this.fd = fd;
    for (let n = 1; n <= this.keep; n += 1) tightenRotation(`${this.path}.${n}`);
    return fd;
  }

  /** Shifts the rotations by one; false (after counting the error) when a rename failed, so the entry is dropped rather than the bound passed. */
  private rotate(): boolean {
    this.close();
    try {
      if (this.keep === 0) rmSync(this.path, { force: true });
      for (let n = this.keep; n >= 1; n -= 1) renameIfPresent(n === 1 ? this.path : `${this.path}.${n - 1}`, `${this.path}.${n}`);
      this.torn = false;
      return true;
    } catch (error) {
      this.onDropped(error);
      return false;
    }
  }
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** Makes an existing rotation private; only regular files, never a symlink's target. */
function tightenRotation(file: string): void {
  try {
    const found = lstatSync(file);
    if (found.isFile() && (found.mode & 0o777) !== PRIVATE_FILE_MODE) chmodSync(file, PRIVATE_FILE_MODE);
  } catch {
    // Absent rotations are the common case.
  }
}
