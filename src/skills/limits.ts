/** Bounds of one discovery (S-6) and of one SKILL.md (S-3, S-4). Defined once; tests hit each edge. */

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
