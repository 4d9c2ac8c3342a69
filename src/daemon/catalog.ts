import { createHash } from "node:crypto";
import { canonicalJson } from "../json/index.js";
import { skillCommandName } from "../commands/index.js";
import { effectiveEnablement, patchSkills, validateSettings, type Settings, type SkillsPatch, type Switch } from "../settings/index.js";
import type { Candidate, CandidateStatus, Diagnostic, FullDiscovery } from "../skills/index.js";
import type { SessionPort, SessionView } from "../session/index.js";
import { HttpProblem } from "./problem.js";

/** Hex characters of a catalog row id. */
export const ROW_ID_LENGTH = 16;

/** Who decided a row's effective enablement: a settings scope, or why the row cannot be on at all. */
export type RowDecider = "session" | "project" | "global" | "default" | "invalid" | "shadowed" | "extension";

/** One skill candidate as the management catalog lists it (D-3). */
export interface CatalogRow {
  readonly id: string;
  readonly name: string;
  readonly preference_key: string | null;
  readonly description: string | null;
  readonly command: string | null;
  readonly source: string;
  readonly resolved_source: string | null;
  readonly scope: string;
  readonly status: CandidateStatus;
  readonly diagnostics: readonly Diagnostic[];
  readonly global_preference: Switch | null;
  readonly project_preference: Switch | null;
  readonly session_override: Switch | null;
  readonly effective: { readonly enabled: boolean; readonly decided_by: RowDecider };
  readonly shadowed_by: string | null;
}

export interface InstructionRow {
  readonly scope: string;
  readonly path: string;
  readonly resolved_path: string;
  readonly size: number;
  readonly truncated: boolean;
  /** sha256 of the text the session would use (bounded to MAX_INSTRUCTION_BYTES). */
  readonly sha256: string;
  readonly enabled: boolean;
}

/** The management catalog of one session (D-3). */
export interface ManagementCatalog {
  readonly revision: string;
  readonly skills: readonly CatalogRow[];
  readonly instructions: readonly InstructionRow[];
  readonly diagnostics: readonly Diagnostic[];
}

/** A row id that stays the same while the skill stays installed at the same place: hash of scope and installed SKILL.md path. */
export function rowId(scope: string, source: string): string {
  return createHash("sha256").update(`${scope}\0${source}`).digest("hex").slice(0, ROW_ID_LENGTH);
}

/** What one scope says about a name: "on", "off" or null. */
function preference(settings: Settings | undefined, key: string | null): Switch | null {
  if (key === null) return null;
  const list = (names: readonly string[] | undefined) => names?.some((name) => name.normalize("NFKC") === key) ?? false;
  if (list(settings?.skills?.off)) return "off";
  if (list(settings?.skills?.on)) return "on";
  return null;
}

function rowOf(candidate: Candidate, view: SessionView): CatalogRow {
  const key = candidate.name ?? null;
  const scopes = view.selection.scopes;
  const verdict = key === null ? undefined : effectiveEnablement(key, scopes);
  let effective: CatalogRow["effective"];
  if (candidate.status !== "valid") effective = { enabled: false, decided_by: candidate.status };
  else if (!view.extensions.skills) effective = { enabled: false, decided_by: "extension" };
  else effective = { enabled: verdict!.enabled, decided_by: verdict!.decidedBy };
  return {
    id: rowId(candidate.scope, candidate.source),
    name: key ?? candidate.dirName,
    preference_key: key,
    description: candidate.description ?? null,
    command: candidate.status === "valid" ? commandInSession(candidate, view) : null,
    source: candidate.source,
    resolved_source: candidate.resolvedSource ?? null,
    scope: candidate.scope,
    status: candidate.status,
    diagnostics: candidate.diagnostics,
    global_preference: preference(scopes.global, key),
    project_preference: preference(scopes.project, key),
    session_override: preference(scopes.session, key),
    effective,
    shadowed_by: candidate.shadowedBy ?? null,
  };
}

/** The command a valid candidate has in the session: only one the session discovered has one (C-2). */
function commandInSession(candidate: Candidate, view: SessionView): string | null {
  const entry = view.discovered.skills.find((skill) => skill.source === candidate.source);
  return entry === undefined ? null : skillCommandName(entry.name);
}

/**
 * The management catalog of one walk of the session's files: every candidate, valid, invalid or
 * shadowed, with its preferences per scope as the view's selection has them. Reads nothing. The
 * revision hashes rows, instruction content and diagnostics.
 */
export function managementCatalog(walk: FullDiscovery, view: SessionView): ManagementCatalog {
  const { found, instructions } = walk;
  const skills = found.candidates.map((candidate) => rowOf(candidate, view));
  const instructionRows = instructions.files.map((file) => ({
    scope: file.scope,
    path: file.path,
    resolved_path: file.resolvedPath,
    size: file.size,
    truncated: file.truncated,
    sha256: createHash("sha256").update(file.text).digest("hex"),
    enabled: view.extensions.skills,
  }));
  const diagnostics = [...found.diagnostics, ...instructions.diagnostics];
  const revision = createHash("sha256").update(canonicalJson({ skills, instructions: instructionRows, diagnostics })).digest("hex");
  return { revision, skills, instructions: instructionRows, diagnostics };
}

/** Reads a session's management catalog (D-3): settings reread once, the files walked once, which also refreshes `needsReload` (D-2). Never reloads. */
export async function readSessionCatalog(session: Pick<SessionPort, "catalog">): Promise<ManagementCatalog> {
  const { walk, view } = await session.catalog.walk();
  return managementCatalog(walk, view);
}

/**
 * Applies session-scope overrides when `expected` is the catalog's revision as it is now (D-3).
 * One walk serves both the check and the answer: overrides change rows, not what is on disk.
 * Throws 409 catalog_changed (nothing applied) and 400 invalid_params.
 */
export async function patchSessionCatalog(session: Pick<SessionPort, "catalog">, expected: string, patch: SkillsPatch): Promise<ManagementCatalog> {
  const { walk, view } = await session.catalog.walk((walk, current) => {
    const { revision } = managementCatalog(walk, current);
    if (revision !== expected) {
      throw new HttpProblem("catalog_changed", `the catalog is at revision ${revision}, not ${expected}; read it again`, { current_revision: revision });
    }
    return checkedSessionSettings(patchSkills(current.selection.scopes.session ?? {}, patch));
  });
  return managementCatalog(walk, view);
}

/** The session scope's settings after a patch, held to the same bounds as a file (D-4). Throws 400 invalid_params. */
function checkedSessionSettings(settings: Settings): Settings {
  const checked = validateSettings(settings, "session");
  if (checked.ok) return checked.settings;
  const first = checked.problems[0]!;
  throw new HttpProblem("invalid_params", `the session overrides would break the settings schema: ${first.path}: ${first.message}`, { problems: checked.problems });
}
