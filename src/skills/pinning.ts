import { lstatSync, realpathSync, statSync, type BigIntStats } from "node:fs";
import { basename, join } from "node:path";
import { AppError } from "../errors/index.js";
import { fileStamp, hasSettled, isProblem, readBoundedFile, settlesAt } from "./files.js";
import { decodeUtf8 } from "../json/index.js";
import { parseSkillDocument, type ParsedSkillDocument } from "./frontmatter.js";
import { MAX_SKILL_FILE_BYTES } from "./limits.js";
import type { FileIdentity, PathGuard, SkillEntry } from "./types.js";
import { normalizeName } from "./validate.js";
import { MAX_VERIFIED_PINS } from "./limits.js";

/**
 * Checks that a skill still matches what its snapshot pinned (R-4, S-9); gives the stats of its
 * SKILL.md taken by the check (the pinned file, followed through a link): at once when SKILL.md's
 * stamp shows it verified (the common case, and the RPC route's fast path), a promise only when
 * SKILL.md has to be reread. Fails (as a rejected promise, never synchronously) with AppError "reload_required" naming the skill when
 * its directory or SKILL.md resolves elsewhere, was replaced or vanished, or its name/description
 * changed; "limit_exceeded" when SKILL.md has grown past MAX_SKILL_FILE_BYTES.
 *
 * With `arrival` (the RPC calls that reached the runtime together, see CallContext.arrival), the
 * first check of a skill for that arrival is kept and given to the others: every call of it was
 * sent before that check ran, so the check saw whatever the kernel did before sending any of them.
 * A check that fails at once is not kept (each call finds the change itself); a reread's promise
 * is kept, and every call of the arrival gets its verdict, as concurrent rereads share one anyway.
 */
export function checkPinned(entry: SkillEntry, arrival?: object): BigIntStats | Promise<BigIntStats> {
  try {
    return checkShared(entry, arrival);
  } catch (error) {
    return Promise.reject(error);
  }
}

function checkShared(entry: SkillEntry, arrival: object | undefined): BigIntStats | Promise<BigIntStats> {
  if (arrival === undefined) return checkNow(entry);
  let checks = checksByArrival.get(arrival);
  if (checks === undefined) {
    checks = new Map();
    checksByArrival.set(arrival, checks);
  }
  let check = checks.get(entry);
  if (check === undefined) {
    check = checkNow(entry);
    checks.set(entry, check);
  }
  return check;
}

/** The checks made for each arrival, by skill; an arrival's go with it once its calls are served. */
const checksByArrival = new WeakMap<object, Map<SkillEntry, BigIntStats | Promise<BigIntStats>>>();

function checkNow(entry: SkillEntry): BigIntStats | Promise<BigIntStats> {
  // Identities are checked with synchronous syscalls (a few microseconds on a local disk, against a
  // thread-pool round trip each); only a SKILL.md whose stamp moved is reread, asynchronously.
  checkPinnedDirectory(entry);
  const key = verifiedKey(entry);
  const source = statPinnedSource(entry);
  const stamp = fileStamp(source);
  const memo = verified.get(key);
  if (memo !== undefined && memo.stamp === stamp && Date.now() < memo.until) return source;
  // Calls that find the same file unverified share one reread: a burst of reads of a skill just
  // opened (a cell gathering hundreds) would otherwise read and parse SKILL.md once per call, each
  // read a thread-pool round trip, and every call would stay in flight until the pool got to it.
  const flight = `${key}\n${stamp}`;
  let reread = rereads.get(flight);
  if (reread === undefined) {
    reread = readPinnedDocument(entry).then(() => undefined).finally(() => rereads.delete(flight));
    rereads.set(flight, reread);
  }
  return reread.then(() => source);
}

/** Rereads of SKILL.md under way, by verified key and the stamp found unverified; each leaves once it settles. */
const rereads = new Map<string, Promise<void>>();

/**
 * SKILL.md files whose metadata was last found matching their pin, with the (size, mtime, ctime)
 * seen then. Any write to a file moves its ctime, so an unchanged stamp means unchanged bytes and
 * the check can skip rereading and parsing the file. But file times move in coarse steps, and a
 * write in the same step as the one before the check would leave the same stamp: so the entry of a
 * file that had not yet settled (see hasSettled) holds only until it has, and the first check after
 * that rereads it once more. Bounded: cleared when it reaches the cap.
 */
const verified = new Map<string, { readonly stamp: string; readonly until: number }>();

/** Each entry's key, made once: snapshot entries never change. */
const verifiedKeys = new WeakMap<SkillEntry, string>();

function verifiedKey(entry: SkillEntry): string {
  let key = verifiedKeys.get(entry);
  if (key === undefined) {
    key = JSON.stringify([entry.sourceIdentity.dev, entry.sourceIdentity.ino, entry.resolvedSource, entry.name, entry.description]);
    verifiedKeys.set(entry, key);
  }
  return key;
}

/**
 * Stats SKILL.md through its installed path and checks it still resolves to the pinned file. Call
 * it after checkPinnedDirectory: a SKILL.md that is no link, in a directory that still resolves to
 * its pinned real path, has that path plus its name as its own, so only a link needs a realpath.
 */
function statPinnedSource(entry: SkillEntry): BigIntStats {
  let real: string;
  let stats: BigIntStats;
  try {
    stats = lstatSync(entry.source, { bigint: true });
    if (stats.isSymbolicLink()) {
      real = realpathSync.native(entry.source);
      stats = statSync(entry.source, { bigint: true });
    } else {
      real = join(entry.resolvedDir, basename(entry.source));
    }
  } catch (error) {
    throw reloadRequired(entry, `SKILL.md cannot be resolved (${codeOf(error)})`);
  }
  if (real !== entry.resolvedSource) throw reloadRequired(entry, `SKILL.md now resolves to ${real} instead of ${entry.resolvedSource}`);
  if (!sameIdentity({ dev: stats.dev.toString(), ino: stats.ino.toString() }, entry.sourceIdentity)) {
    throw reloadRequired(entry, SKILL_FILE_REPLACED);
  }
  return stats;
}

/** Like checkPinned, and returns the SKILL.md as parsed at this call (same inode, so in-place edits show). */
export async function readPinnedDocument(entry: SkillEntry): Promise<ParsedSkillDocument> {
  // The stamp is taken before the read: a write racing the read leaves a stale stamp, which only forces a reread.
  checkPinnedDirectory(entry);
  const stamped = statPinnedSource(entry);
  const file = await readBoundedFile(entry.source, MAX_SKILL_FILE_BYTES);
  if (isProblem(file)) throw reloadRequired(entry, file.message);
  if (file.resolvedPath !== entry.resolvedSource) {
    throw reloadRequired(entry, `SKILL.md now resolves to ${file.resolvedPath} instead of ${entry.resolvedSource}`);
  }
  if (!sameIdentity(file.identity, entry.sourceIdentity)) throw reloadRequired(entry, SKILL_FILE_REPLACED);
  if (file.truncated) throw skillFileTooLarge(entry, file.size);
  const text = decodeUtf8(file.bytes);
  if (text === undefined) throw reloadRequired(entry, "SKILL.md is no longer valid UTF-8");
  const document = parseSkillDocument(text);
  if (!sameMetadata(entry, document.fields)) throw reloadRequired(entry, "its name or description changed");
  if (verified.size >= MAX_VERIFIED_PINS) verified.clear();
  const until = hasSettled(stamped, Date.now()) ? Infinity : settlesAt(stamped);
  verified.set(verifiedKey(entry), { stamp: fileStamp(stamped), until });
  return document;
}

function checkPinnedDirectory(entry: SkillEntry): void {
  let real: string;
  let stats: BigIntStats;
  try {
    real = realpathSync.native(entry.dir);
    stats = statSync(entry.dir, { bigint: true });
  } catch (error) {
    throw reloadRequired(entry, `its directory ${entry.dir} cannot be resolved (${codeOf(error)})`);
  }
  if (real !== entry.resolvedDir) throw reloadRequired(entry, `its directory now resolves to ${real} instead of ${entry.resolvedDir}`);
  if (!stats.isDirectory() || !sameIdentity({ dev: stats.dev.toString(), ino: stats.ino.toString() }, entry.dirIdentity)) {
    throw reloadRequired(entry, "its directory was replaced");
  }
}

/** Compares the required fields the way discovery derived them (name NFKC-normalised and trimmed, description trimmed). */
function sameMetadata(entry: SkillEntry, fields: Record<string, unknown> | undefined): boolean {
  const name = fields?.name;
  const description = fields?.description;
  return (
    typeof name === "string" &&
    typeof description === "string" &&
    normalizeName(name.trim()) === entry.name &&
    description.trim() === entry.description
  );
}

export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : String(error);
}

/** The limit_exceeded error for a SKILL.md grown past MAX_SKILL_FILE_BYTES. */
export function skillFileTooLarge(entry: SkillEntry, size: number): AppError {
  return new AppError(
    "limit_exceeded",
    `SKILL.md of skill "${entry.name}" is ${size} bytes; the limit is MAX_SKILL_FILE_BYTES = ${MAX_SKILL_FILE_BYTES}`,
    { skill: entry.name, limit: "MAX_SKILL_FILE_BYTES", value: size },
  );
}

/**
 * Why a SKILL.md with a new inode is refused: many editors save by writing a new file and renaming
 * it over the old one, which the pins (rightly) see as another file, where a write in place is not.
 */
export const SKILL_FILE_REPLACED = "SKILL.md was replaced by a new file in its place, as editors that save by replacement do; an edit in place needs no reload";

export function reloadRequired(entry: SkillEntry, reason: string): AppError {
  return new AppError("reload_required", `skill "${entry.name}" changed on disk (${reason}); run \`/reload session\` to use it`, {
    skill: entry.name,
  });
}

/** Throws AppError "forbidden" when the guard refuses the skill's pinned directory or SKILL.md. */
export function checkGuard(entry: SkillEntry, guard: PathGuard | undefined): void {
  if (guard === undefined || (guard(entry.resolvedDir) && guard(entry.resolvedSource))) return;
  throw new AppError("forbidden", `skill "${entry.name}" lives in a place this session's sandbox hides (${entry.resolvedSource})`, { skill: entry.name });
}
