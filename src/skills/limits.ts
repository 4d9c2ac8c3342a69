/** Bounds of one discovery (S-6), of one SKILL.md (S-3, S-4), and of resource listings and reads. Defined once; tests hit each edge. */

/** Candidate entries examined per discovery, over all roots together. */
export const MAX_CANDIDATES = 128;
/** Parsed SKILL.md files a session's parse cache keeps; one walk sees at most MAX_CANDIDATES. */
export const MAX_PARSE_CACHE_ENTRIES = MAX_CANDIDATES;
/** Diagnostics kept in one catalog (the note saying how many were dropped included). */
export const MAX_DIAGNOSTICS = 64;
/** Bytes of YAML between the two `---` lines. */
export const MAX_FRONTMATTER_BYTES = 64 * 1024;
/** Frontmatter parses the process keeps by their text (frontmatter.ts), and the characters of text they may hold together. */
export const MAX_FRONTMATTER_MEMO_ENTRIES = 1024;
export const MAX_FRONTMATTER_MEMO_CHARS = 4 * 1024 * 1024;
/** Bytes of one SKILL.md; a larger file is a diagnostic and is never read in full. */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;
/** Bytes kept of one instruction file (S-11); the rest is cut and flagged. */
export const MAX_INSTRUCTION_BYTES = 64 * 1024;
/** Unicode code points in a skill name. */
export const MAX_NAME_LENGTH = 64;
/** Unicode code points in a description. */
export const MAX_DESCRIPTION_LENGTH = 1024;
/** Unicode code points in `compatibility`. */
export const MAX_COMPATIBILITY_LENGTH = 500;
/** Alias resolutions allowed while turning frontmatter YAML into values (billion-laughs guard). */
export const MAX_YAML_ALIAS_COUNT = 100;
/** Collection nesting levels in frontmatter YAML; deeper input is refused before composing it (B: deep nesting). */
export const MAX_YAML_DEPTH = 64;
/**
 * A file changed more recently than this is read again every time rather than trusted by its stamp
 * (the parse cache and the kept SKILL.md bytes): a second write in the same timestamp tick leaves
 * size, mtime and ctime as they were, so the stamp could not tell the two contents apart, while a
 * write after a still period longer than one tick always moves ctime. Local Linux filesystems tick
 * every few milliseconds; ext3's small inodes, HFS+ and some network mounts store whole seconds,
 * FAT two.
 */
export const UNSETTLED_FILE_MS = 3_000;
/** Bytes per page when the caller gives no limit. */
export const DEFAULT_READ_LIMIT = 16384;
/** Largest page a caller may ask for, in bytes; a larger limit is refused, not clamped. */
export const MAX_READ_LIMIT = 65536;
/** Largest resource that may be read at all, in bytes. */
export const MAX_RESOURCE_BYTES = 16 * 1024 * 1024;
/** Files one listing returns. */
export const MAX_RESOURCES = 512;
/** Directory entries one listing examines, over all directories together. */
export const MAX_RESOURCE_ENTRIES = 2048;
/** Diagnostics one listing returns, the note saying how many were dropped included. */
export const MAX_RESOURCE_DIAGNOSTICS = 64;
/** Entries kept in the verified-metadata memo before it is cleared. */
export const MAX_VERIFIED_PINS = 4096;
/** Directory levels below the skill directory that listing descends into and reads may name. */
export const MAX_RESOURCE_DEPTH = 16;
/** UTF-16 code units in one resource path as written. */
export const MAX_RESOURCE_PATH_LENGTH = 4096;
/** Files kept at most; the least recently used goes first. */
export const MAX_SETTLED_FILES = 256;
/** Bytes kept at most over all files. */
export const MAX_SETTLED_BYTES = 16 * 1024 * 1024;
/** Characters of the offending line quoted in a message; a longer line is cut. */
export const MAX_QUOTED_LINE_CHARS = 120;
