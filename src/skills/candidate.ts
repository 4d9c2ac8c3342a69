import type { BigIntStats } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, join } from "node:path";
import { identityOf, isProblem, probe, readBoundedFile } from "./files.js";
import { fileKind } from "../platform/index.js";
import { MAX_SKILL_FILE_BYTES } from "./limits.js";
import type { ParseCacheWalk, ParsedSkillFile } from "./parseCache.js";
import type { Diagnostic, FileIdentity, OptionalFields, Problem, Scope } from "./types.js";
import { validateSkillFields } from "./validate.js";

/** Where a candidate stands after discovery (S-7). */
export type CandidateStatus = "valid" | "invalid" | "shadowed";

/** One immediate child of a root, examined (D-3 builds its management rows from these). */
export interface Candidate {
  /** The child's own (link) name. */
  readonly dirName: string;
  readonly scope: Scope;
  /** Index of the root in discoveryRoots() order, 0-based. */
  readonly rootIndex: number;
  /** Installed skill directory: through the root, not the link target. */
  readonly dir: string;
  /** Installed SKILL.md path. */
  readonly source: string;
  readonly resolvedDir?: string;
  readonly resolvedSource?: string;
  readonly dirIdentity?: FileIdentity;
  readonly sourceIdentity?: FileIdentity;
  readonly size?: number;
  /** Frontmatter name (NFKC), the preference key; present when it could be read as a string. */
  readonly name?: string;
  readonly description?: string;
  readonly optional?: OptionalFields;
  readonly status: CandidateStatus;
  /** Installed SKILL.md path of the winner, when shadowed. */
  readonly shadowedBy?: string;
  /** This candidate's own problems (errors make it invalid; warnings leave it valid). */
  readonly diagnostics: readonly Diagnostic[];
}

/** Name of the required skill file inside a skill directory. */
export const SKILL_FILE = "SKILL.md";

function diag(severity: Diagnostic["severity"], path: string, problem: Problem): Diagnostic {
  // A diagnostic is one line wherever it is shown, so the fix travels inside the message.
  return { severity, path, code: problem.code, message: problem.fix ? `${problem.message}; fix: ${problem.fix}` : problem.message };
}

/**
 * The candidate of a root child whose name is not valid UTF-8 (`escapedName` from escapeInvalidUtf8).
 * It is not examined: no frontmatter name can equal it (S-2), and its path cannot be spelled as a string.
 */
export function undecodableCandidate(root: string, escapedName: string, scope: Scope, rootIndex: number): Candidate {
  const dir = join(root, escapedName);
  return {
    dirName: escapedName,
    scope,
    rootIndex,
    dir,
    source: join(dir, SKILL_FILE),
    status: "invalid",
    diagnostics: [diag("error", dir, { code: "invalid_name_encoding", message: `directory name is not valid UTF-8: ${escapedName}` })],
  };
}

/**
 * Examines one root child: directory, SKILL.md, frontmatter, fields. Never throws and never
 * blocks on special files; every failure is a diagnostic on the returned candidate. Links are
 * resolved and identities read afresh on every call; only the parse of an unchanged SKILL.md
 * comes from `parses`.
 */
export async function examineCandidate(root: string, dirName: string, scope: Scope, rootIndex: number, parses: ParseCacheWalk): Promise<Candidate> {
  const dir = join(root, dirName);
  const source = join(dir, SKILL_FILE);
  const base = { dirName, scope, rootIndex, dir, source };
  const invalid = (path: string, ...problems: Problem[]): Candidate => ({
    ...base,
    status: "invalid",
    diagnostics: problems.map((p) => diag("error", path, p)),
  });

  const dirProbe = await probe(dir);
  if (dirProbe.kind === "missing") return invalid(dir, { code: "broken_link", message: `${dir}: vanished while being examined` });
  if (dirProbe.kind === "problem") return invalid(dir, dirProbe.problem);
  if (!dirProbe.stats.isDirectory()) {
    return invalid(dir, { code: "not_directory", message: `${dir} is ${fileKind(dirProbe.stats)}; a skill must be a directory` });
  }
  let resolvedDir: string;
  try {
    resolvedDir = await realpath(dir);
  } catch {
    return invalid(dir, { code: "unreadable", message: `${dir}: cannot resolve its real path` });
  }
  const pinned = { ...base, resolvedDir, dirIdentity: identityOf(dirProbe.stats) };

  const fileProbe = await probe(source);
  if (fileProbe.kind === "missing") return { ...invalid(source, await missingFileProblem(dir)), ...pinned };
  if (fileProbe.kind === "problem") return { ...invalid(source, fileProbe.problem), ...pinned };
  // With nothing kept (a one-off discovery, a session's first walk) a lookup's realpath would be wasted.
  const reused = parses.empty ? undefined : await reusedParse(source, fileProbe.stats, parses);
  if (reused !== undefined) return judge({ ...pinned, ...reused.pins }, reused.parsed);
  const file = await readBoundedFile(source, MAX_SKILL_FILE_BYTES);
  if (isProblem(file)) return { ...invalid(source, file), ...pinned };
  const sized = { ...pinned, resolvedSource: file.resolvedPath, sourceIdentity: file.identity, size: file.size };
  if (file.truncated) {
    return {
      ...invalid(source, {
        code: "file_too_large",
        message: `SKILL.md is ${file.size} bytes; the limit is MAX_SKILL_FILE_BYTES = ${MAX_SKILL_FILE_BYTES}`,
      }),
      ...sized,
    };
  }
  return judge(sized, parses.parse(file.resolvedPath, file.stats, file.bytes));
}

/**
 * SKILL.md's kept parse when one is kept for exactly its real path and stamp, with the pins taken
 * now: the real path from a fresh realpath, identity and size from this walk's `stats`. Undefined
 * when the file must be read.
 */
async function reusedParse(
  source: string,
  stats: BigIntStats,
  parses: ParseCacheWalk,
): Promise<{ pins: Pick<Candidate, "resolvedSource" | "sourceIdentity" | "size">; parsed: ParsedSkillFile } | undefined> {
  if (!stats.isFile()) return undefined;
  let resolvedSource: string;
  try {
    resolvedSource = await realpath(source);
  } catch {
    return undefined;
  }
  const parsed = parses.lookup(resolvedSource, stats);
  if (parsed === undefined) return undefined;
  return { pins: { resolvedSource, sourceIdentity: identityOf(stats), size: Number(stats.size) }, parsed };
}

/** Why a skill directory has no usable SKILL.md. */
async function missingFileProblem(dir: string): Promise<Problem> {
  const lower = await probe(join(dir, "skill.md"));
  if (lower.kind === "found") {
    return { code: "lowercase_skill_md", message: `${dir} has skill.md but discovery needs SKILL.md; rename the file` };
  }
  return { code: "missing_skill_md", message: `${dir} has no SKILL.md` };
}

type Examined = Omit<Candidate, "status" | "diagnostics" | "name" | "description" | "optional">;

/** Validates a parsed SKILL.md against its directory; the candidate is valid when no error was found. */
function judge(candidate: Examined, parsed: ParsedSkillFile): Candidate {
  if (parsed.fields === undefined) {
    return { ...candidate, status: "invalid", diagnostics: parsed.problems.map((p) => diag("error", candidate.source, p)) };
  }
  const checked = validateSkillFields(parsed.fields, basename(candidate.dir), { strict: false });
  const diagnostics = [
    ...checked.errors.map((p) => diag("error", candidate.source, p)),
    ...checked.warnings.map((p) => diag("warning", candidate.source, p)),
  ];
  return {
    ...candidate,
    ...(checked.name === undefined ? {} : { name: checked.name }),
    ...(checked.description === undefined ? {} : { description: checked.description }),
    optional: checked.optional,
    status: checked.errors.length === 0 ? "valid" : "invalid",
    diagnostics,
  };
}
