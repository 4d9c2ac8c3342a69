/** Where a discovery root sits; decides precedence (S-7). */
export type Scope = "workspace" | "user" | "builtin";

/** A filesystem identity pinned at discovery time (S-9). Strings because inode numbers can exceed 2^53. */
export interface FileIdentity {
  readonly dev: string;
  readonly ino: string;
}

export type Severity = "error" | "warning";

/** One problem found while cataloging; `path` is the installed path it concerns. */
export interface Diagnostic {
  readonly severity: Severity;
  readonly code: string;
  readonly path: string;
  readonly message: string;
}

/** A problem found by validation of one SKILL.md, before it is tied to a path. */
export interface Problem {
  readonly code: string;
  readonly message: string;
  /** The SKILL.md line it is on, when it is on one. */
  readonly line?: number;
  /** What to write instead, when albedo knows. */
  readonly fix?: string;
}

/** The optional frontmatter fields; kept in the snapshot, never advertised eagerly (S-8). */
export interface OptionalFields {
  readonly license?: string;
  readonly compatibility?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly allowedTools?: string;
}

/** A valid, winning skill as pinned in a snapshot. */
export interface SkillEntry {
  readonly name: string;
  readonly description: string;
  /** Installed SKILL.md path: through the root, not the link target. */
  readonly source: string;
  readonly scope: Scope;
  /** Installed skill directory (parent of `source`). */
  readonly dir: string;
  /** Real path of the skill directory. */
  readonly resolvedDir: string;
  /** Real path of SKILL.md. */
  readonly resolvedSource: string;
  readonly dirIdentity: FileIdentity;
  readonly sourceIdentity: FileIdentity;
  /** Size of SKILL.md in bytes at discovery. */
  readonly size: number;
  readonly optional: OptionalFields;
}

/** A standing-orders file (S-11). */
export interface InstructionFile {
  readonly scope: "workspace" | "user";
  /** Installed path. */
  readonly path: string;
  readonly resolvedPath: string;
  readonly text: string;
  readonly size: number;
  /** True when the file exceeded the bound and `text` holds only its first part. */
  readonly truncated: boolean;
}

/** Immutable result of one discovery (S-9). Never patched; reload builds a new one. */
export interface CatalogSnapshot {
  /** Content hash of everything below. */
  readonly revision: string;
  readonly workspace: string;
  readonly home: string;
  readonly skills: readonly SkillEntry[];
  readonly diagnostics: readonly Diagnostic[];
  readonly instructions: readonly InstructionFile[];
}

/**
 * Decides whether the runtime may serve a file, by its real path, to a caller. A sandboxed session
 * passes one so that a link planted in the workspace cannot fetch, through the runtime, a file its
 * sandbox hides (the state dir, the home). Absent means no restriction beyond the filesystem's.
 */
export type PathGuard = (realPath: string) => boolean;
