/**
 * Bytes of pinned SKILL.md files kept in memory while their stamp stays put, so a read of an
 * unchanged file costs the pin checks alone (no open, fstat, read and close).
 *
 * A stamp (size, mtime, ctime) only proves "unchanged" once the file has settled: file times tick
 * in coarse steps (a jiffy, a second on some filesystems), so two writes close together can leave
 * the same stamp. A file is kept only when its ctime is older than UNSETTLED_FILE_MS, the way git treats
 * "racily clean" index entries; any later write then moves ctime past the kept one, and the next
 * read finds the stamp changed and reads the file again. ctime cannot be set by a user, unlike mtime.
 */
import type { BigIntStats } from "node:fs";
import { fileStamp, hasSettled } from "./files.js";
import { MAX_SETTLED_BYTES, MAX_SETTLED_FILES } from "./limits.js";


export interface SettledFilesOptions {
  readonly maxFiles?: number;
  readonly maxBytes?: number;
  /** Wall clock in epoch ms (file times are wall-clock). */
  readonly now?: () => number;
}

interface Kept {
  /** fileStamp() of the file the bytes were read from. */
  readonly stamp: string;
  readonly bytes: Buffer;
}

export class SettledFiles {
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;
  private readonly maxFiles: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  /** Reads answered from memory, for tests and the bench. */
  hits = 0;

  constructor(options: SettledFilesOptions = {}) {
    this.maxFiles = options.maxFiles ?? MAX_SETTLED_FILES;
    this.maxBytes = options.maxBytes ?? MAX_SETTLED_BYTES;
    this.now = options.now ?? Date.now;
  }

  /** The kept bytes of `path` when `stats` (taken now) show the same file with the same stamp; else undefined. */
  get(path: string, stats: BigIntStats): Buffer | undefined {
    const kept = this.kept.get(path);
    if (kept === undefined) return undefined;
    if (kept.stamp !== fileStamp(stats)) {
      this.drop(path, kept);
      return undefined;
    }
    // Most recently used last: eviction takes from the front.
    this.kept.delete(path);
    this.kept.set(path, kept);
    this.hits++;
    return kept.bytes;
  }

  /** Whether a file with these stats would be kept: it has been still for UNSETTLED_FILE_MS and fits the byte bound. */
  wouldKeep(stats: BigIntStats): boolean {
    return stats.size <= BigInt(this.maxBytes) && hasSettled(stats, this.now());
  }

  /** Keeps `bytes` (the whole file, read after `stats` was taken) when the file has settled and fits the bounds. */
  keep(path: string, stats: BigIntStats, bytes: Buffer): void {
    if (BigInt(bytes.length) !== stats.size || !this.wouldKeep(stats)) return;
    const old = this.kept.get(path);
    if (old !== undefined) this.drop(path, old);
    this.kept.set(path, { stamp: fileStamp(stats), bytes });
    this.bytes += bytes.length;
    for (const [oldest, entry] of this.kept) {
      if (this.kept.size <= this.maxFiles && this.bytes <= this.maxBytes) break;
      this.drop(oldest, entry);
    }
  }

  /** Files kept now. */
  get size(): number {
    return this.kept.size;
  }

  private drop(path: string, kept: Kept): void {
    this.kept.delete(path);
    this.bytes -= kept.bytes.length;
  }
}
