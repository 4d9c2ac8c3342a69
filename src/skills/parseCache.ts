import type { BigIntStats } from "node:fs";
import { decodeUtf8 } from "../json/index.js";
import { parseSkillDocument } from "./frontmatter.js";
import { fileStamp, hasSettled } from "./files.js";
import { MAX_PARSE_CACHE_ENTRIES } from "./limits.js";
import type { Problem } from "./types.js";

/** What the bytes of a SKILL.md alone decide: its frontmatter fields, or the problems that kept them from being read. */
export type ParsedSkillFile =
  | { readonly fields: Readonly<Record<string, unknown>>; readonly problems?: undefined }
  | { readonly fields: undefined; readonly problems: readonly Problem[] };

/** One walk's use of a ParseCache; it must see every SKILL.md the walk parses or reuses. */
export interface ParseCacheWalk {
  /** True while no parse is kept for this walk to reuse, so a lookup would find nothing. */
  readonly empty: boolean;
  /** The parse kept for exactly this resolved path, identity and stamp (stats through the links), or undefined. */
  lookup(resolvedPath: string, stats: BigIntStats): ParsedSkillFile | undefined;
  /** Parses bytes read through a descriptor whose fstat is `stats`; keeps the result when the file is settled. */
  parse(resolvedPath: string, stats: BigIntStats, bytes: Buffer): ParsedSkillFile;
  /** Makes what this walk saw the whole cache: files it did not see are dropped. */
  finish(): void;
}

/**
 * Parsed SKILL.md contents one catalog owner reuses across its walks. Only the parse is kept:
 * every walk still stats and resolves each path itself, and a parse is served only for the same
 * real path, (dev, ino), size, mtime and ctime it was read with. Any write moves ctime, so a
 * changed or replaced file is read again. Holds at most MAX_PARSE_CACHE_ENTRIES. Its owner runs one
 * walk at a time; walks that overlap stay correct, and the last to finish decides what is kept.
 */
export class ParseCache {
  private kept: ReadonlyMap<string, ParsedSkillFile> = new Map();
  private parsed = 0;

  /** `nowMs` is the wall clock file ctimes are compared with. */
  constructor(private readonly nowMs: () => number = Date.now) {}

  /** SKILL.md files parsed rather than reused since this cache was made. */
  get parses(): number {
    return this.parsed;
  }

  /** Parses kept now. */
  get size(): number {
    return this.kept.size;
  }

  /** Starts one walk: it reads what the last finished walk kept and records what it sees itself. */
  walk(): ParseCacheWalk {
    const previous = this.kept;
    const seen = new Map<string, ParsedSkillFile>();
    const nowMs = this.nowMs();
    const keep = (key: string, parsed: ParsedSkillFile) => {
      if (seen.has(key) || seen.size < MAX_PARSE_CACHE_ENTRIES) seen.set(key, parsed);
    };
    return {
      get empty() {
        return previous.size === 0 && seen.size === 0;
      },
      lookup: (resolvedPath, stats) => {
        const key = cacheKey(resolvedPath, stats);
        const hit = seen.get(key) ?? previous.get(key);
        if (hit !== undefined) keep(key, hit);
        return hit;
      },
      parse: (resolvedPath, stats, bytes) => {
        this.parsed++;
        const parsed = parseSkillFile(bytes);
        if (hasSettled(stats, nowMs)) keep(cacheKey(resolvedPath, stats), parsed);
        return parsed;
      },
      finish: () => {
        this.kept = seen;
      },
    };
  }
}

function cacheKey(resolvedPath: string, stats: BigIntStats): string {
  // NUL cannot occur in a path, so no two different keys read the same.
  return `${resolvedPath}\0${fileStamp(stats)}`;
}

/** Decodes SKILL.md bytes as strict UTF-8 and parses their frontmatter; never throws. Frozen: walks share it. */
function parseSkillFile(bytes: Buffer): ParsedSkillFile {
  const text = decodeUtf8(bytes);
  const problems = (list: readonly Problem[]) => Object.freeze({ fields: undefined, problems: Object.freeze(list) });
  if (text === undefined) return problems([{ code: "invalid_utf8", message: "SKILL.md is not valid UTF-8" }]);
  const parsed = parseSkillDocument(text);
  if (parsed.fields === undefined) return problems(parsed.problems);
  return Object.freeze({ fields: Object.freeze(parsed.fields) });
}
