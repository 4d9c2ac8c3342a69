import { lstatSync, realpathSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { AppError } from "../errors/index.js";
import { completeUtf8Length, decodeUtf8 } from "../json/index.js";
import { identityOf } from "./files.js";
import { MAX_SKILL_FILE_BYTES } from "./limits.js";
import { checkGuard, checkPinned, reloadRequired, sameIdentity, SKILL_FILE_REPLACED, skillFileTooLarge } from "./pinning.js";
import { SettledFiles } from "./settledFiles.js";
import { closeQuietly, FileMovedError, readAt, readSteady, type OpenedFile } from "../platform/index.js";
import { NotRegularFileError, openRegular } from "./regularFile.js";
import { SKILL_FILE } from "./candidate.js";
import { checkResourcePath } from "./resourcePath.js";
import type { PathGuard, SkillEntry } from "./types.js";
import { DEFAULT_READ_LIMIT, MAX_READ_LIMIT, MAX_RESOURCE_BYTES } from "./limits.js";


/** One page of a resource. `next_offset` is null when the page reaches the end. */
export interface ReadResult {
  readonly content: string;
  readonly encoding: "utf-8" | "base64";
  readonly size: number;
  readonly offset: number;
  readonly next_offset: number | null;
  readonly truncated: boolean;
}

/**
 * Reads one byte range of a skill resource, checking arguments and path before any disk access and
 * the skill's pins before the read: at once unless the pin check has to reread SKILL.md (see
 * checkPinned) or the file changed too recently to be read at once (see readSteady), else a promise
 * (the RPC route's fast path answers what it has at once). `arrival` shares the pin check among the
 * calls that reached the runtime together. Fails with AppError: "invalid_params" (bad offset/limit/path,
 * not a regular file), "limit_exceeded" (limit > MAX_READ_LIMIT, resource > MAX_RESOURCE_BYTES),
 * "not_found", "forbidden", "reload_required", or "conflict" (the file changed while it was
 * read, twice in a row: a page never mixes two versions of a file rewritten in place), always as a
 * rejected promise, never synchronously.
 */
export function readResource(
  entry: SkillEntry,
  resource: string = SKILL_FILE,
  offset: number = 0,
  limit: number = DEFAULT_READ_LIMIT,
  guard?: PathGuard,
  arrival?: object,
): ReadResult | Promise<ReadResult> {
  try {
    checkPageBounds(offset, limit);
    const segments = checkResourcePath(resource);
    const pinned = checkPinned(entry, arrival);
    if (pinned instanceof Promise) return pinned.then((source) => readPinned(entry, resource, segments, source, offset, limit, guard));
    return readPinned(entry, resource, segments, pinned, offset, limit, guard);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The page, once the pin check passed and gave SKILL.md's stats (`source`). */
function readPinned(
  entry: SkillEntry,
  resource: string,
  segments: readonly string[],
  source: BigIntStats,
  offset: number,
  limit: number,
  guard: PathGuard | undefined,
): ReadResult | Promise<ReadResult> {
  checkGuard(entry, guard);
  // The pin check just resolved SKILL.md to the pinned file, whose real path the guard has seen.
  if (segments.length === 1 && segments[0] === SKILL_FILE) return readSkillFile(entry, source, offset, limit);
  if (guard) checkResourceGuard(entry, resource, segments, guard);
  const opened = openResource(entry, resource, join(entry.dir, ...segments));
  return readUnmoved(entry, resource, opened, (stats) => {
    const size = Number(stats.size);
    if (size > MAX_RESOURCE_BYTES) {
      throw new AppError(
        "limit_exceeded",
        `resource "${resource}" of skill "${entry.name}" is ${size} bytes; the limit is MAX_RESOURCE_BYTES = ${MAX_RESOURCE_BYTES}`,
        { limit: "MAX_RESOURCE_BYTES", value: size },
      );
    }
    return pageOf(readPage(opened.fd, offset, limit, size), offset, limit, size);
  });
}

/** Pinned SKILL.md files kept while unchanged (see settledFiles.ts); one set for the process, bounded. */
export const settledSkillFiles = new SettledFiles();

/**
 * A page of the pinned SKILL.md: from kept bytes when `source` (its stats, taken by the pin check)
 * shows the same settled file; else read through a descriptor whose identity must still be the
 * pinned one, whole when the file would be kept (the pin check bounds it by MAX_SKILL_FILE_BYTES),
 * else just the page.
 */
function readSkillFile(entry: SkillEntry, source: BigIntStats, offset: number, limit: number): ReadResult | Promise<ReadResult> {
  const kept = settledSkillFiles.get(entry.resolvedSource, source);
  if (kept !== undefined) return pageOf(kept, offset, limit);
  const opened = openResource(entry, SKILL_FILE, entry.source);
  if (!sameIdentity(identityOf(opened.stats), entry.sourceIdentity)) {
    closeQuietly(opened.fd);
    throw reloadRequired(entry, SKILL_FILE_REPLACED);
  }
  const read = readUnmoved(entry, SKILL_FILE, opened, (stats) => {
    const size = Number(stats.size);
    if (size > MAX_SKILL_FILE_BYTES) throw skillFileTooLarge(entry, size);
    if (!settledSkillFiles.wouldKeep(stats)) return { page: pageOf(readPage(opened.fd, offset, limit, size), offset, limit, size) };
    return { whole: size === 0 ? Buffer.alloc(0) : readAt(opened.fd, 0, size), stats };
  });
  // Kept only once the read is known to have seen one version of the file.
  const answer = (got: { page: ReadResult } | { whole: Buffer; stats: BigIntStats }): ReadResult => {
    if ("page" in got) return got.page;
    settledSkillFiles.keep(entry.resolvedSource, got.stats, got.whole);
    return pageOf(got.whole, offset, limit);
  };
  return read instanceof Promise ? read.then(answer) : answer(read);
}

/** The `limit` bytes (fewer at the end) at `offset` of a file of `size` bytes. */
function readPage(fd: number, offset: number, limit: number, size: number): Buffer {
  const wanted = Math.max(0, Math.min(limit, size - offset));
  return wanted === 0 ? Buffer.alloc(0) : readAt(fd, offset, wanted);
}

/**
 * `read` of an opened resource through readSteady (which closes it), so a page never mixes two
 * versions of a file rewritten in place; a resource that changed under two reads in a row is a
 * "conflict" the caller may retry.
 */
function readUnmoved<T>(entry: SkillEntry, resource: string, opened: OpenedFile, read: (stats: BigIntStats) => T): T | Promise<T> {
  const result = readSteady(opened, read);
  if (!(result instanceof Promise)) return result;
  return result.catch((error: unknown) => {
    if (!(error instanceof FileMovedError)) throw error;
    throw new AppError("conflict", `resource "${resource}" of skill "${entry.name}" changed while it was read, twice in a row; read it again`, { skill: entry.name, resource });
  });
}

/**
 * The page at `offset` of a resource: `bytes` holds the whole resource, or (with `size`) the
 * `limit` bytes read at `offset` of a resource of `size` bytes.
 */
function pageOf(bytes: Buffer, offset: number, limit: number, size?: number): ReadResult {
  const total = size ?? bytes.length;
  const wanted = Math.max(0, Math.min(limit, total - offset));
  const range = size === undefined ? bytes.subarray(Math.min(offset, total), Math.min(offset, total) + wanted) : bytes;
  // A short read means the file shrank under us: treat it as the end rather than loop.
  const atEnd = offset + range.length >= total || range.length < wanted;
  const page = encodePage(range, atEnd);
  const next = atEnd ? null : offset + page.consumed;
  return { content: page.content, encoding: page.encoding, size: total, offset, next_offset: next, truncated: next !== null };
}

/** Refuses a resource whose real path the guard hides (a link planted toward the state dir or the home). */
function checkResourceGuard(entry: SkillEntry, resource: string, segments: readonly string[], guard: PathGuard): void {
  const real = resourceRealPath(entry, segments);
  if (real !== undefined && !guard(real)) {
    throw new AppError("forbidden", `resource "${resource}" of skill "${entry.name}" resolves to a place this session's sandbox hides`, { skill: entry.name });
  }
}

/**
 * The real path of a resource, or undefined when it does not resolve (the open that follows says
 * why). Called after the pin check, so the skill directory resolves to its pinned real path: when
 * no segment is a link the resource's real path is that plus the segments, found with one lstat per
 * segment instead of a realpath walking every component from the root.
 */
function resourceRealPath(entry: SkillEntry, segments: readonly string[]): string | undefined {
  let at = entry.dir;
  try {
    for (const segment of segments) {
      at = join(at, segment);
      if (lstatSync(at).isSymbolicLink()) return realpathSync.native(join(entry.dir, ...segments));
    }
  } catch {
    return undefined;
  }
  return join(entry.resolvedDir, ...segments);
}

/** Refuses offsets and limits that are not in range, before anything touches the disk. */
function checkPageBounds(offset: number, limit: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new AppError("invalid_params", `offset must be a non-negative integer, got ${String(offset)}`);
  }
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new AppError("invalid_params", `limit must be a positive integer, got ${String(limit)}`);
  }
  if (limit > MAX_READ_LIMIT) {
    throw new AppError("limit_exceeded", `limit ${limit} is larger than MAX_READ_LIMIT = ${MAX_READ_LIMIT} bytes`, {
      limit: "MAX_READ_LIMIT",
      value: limit,
    });
  }
}

interface EncodedPage {
  readonly content: string;
  readonly encoding: "utf-8" | "base64";
  /** Bytes of the page the content stands for; next_offset resumes right after them. */
  readonly consumed: number;
}

/**
 * Text when the page is valid UTF-8 without NUL bytes (ending before any sequence the page cuts
 * in two), else base64 of every byte read. Always consumes at least one byte of a non-empty page.
 */
export function encodePage(bytes: Buffer, atEnd: boolean): EncodedPage {
  if (bytes.length === 0) return { content: "", encoding: "utf-8", consumed: 0 };
  const keep = atEnd ? bytes.length : completeUtf8Length(bytes);
  if (keep > 0) {
    const text = decodeUtf8(bytes.subarray(0, keep));
    if (text !== undefined && !text.includes("\0")) return { content: text, encoding: "utf-8", consumed: keep };
  }
  return { content: bytes.toString("base64"), encoding: "base64", consumed: bytes.length };
}

/** Opens the resource as a regular file, mapping filesystem failures to wire errors. */
function openResource(entry: SkillEntry, resource: string, path: string): OpenedFile {
  const what = `resource "${resource}" of skill "${entry.name}"`;
  try {
    return openRegular(path);
  } catch (error) {
    if (error instanceof NotRegularFileError) throw new AppError("invalid_params", `${what} is ${error.kind}, not a regular file`);
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      const dangling = isSymbolicLink(path);
      throw new AppError("not_found", dangling ? `${what} is a broken symbolic link` : `${what} does not exist`);
    }
    if (code === "ELOOP") throw new AppError("not_found", `${what} resolves through a cycle of symbolic links`);
    if (code === "EACCES" || code === "EPERM") throw new AppError("forbidden", `${what} cannot be read: permission denied`);
    throw error;
  }
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
