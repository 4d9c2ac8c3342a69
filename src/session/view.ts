import { basename, dirname } from "node:path";
import { buildCommandCatalog, type CommandCatalog } from "../commands/index.js";
import {
  effectiveEnablement, globalSettingsTarget, projectSettingsTarget, readSettings,
  type Enablement, type ScopedSettings, type Settings,
} from "../settings/index.js";
import { discoverEverything, selectSkills, type CatalogSnapshot, type FullDiscovery, type ParseCache } from "../skills/index.js";
import type { McpReloadChange } from "../mcp/index.js";

/** Which extensions a session has on (K-8). `skills` depends on `python`, which is always on. */
export interface ExtensionState {
  readonly skills: boolean;
}

/** The settings that decide enablement, with the revisions of the files they came from. */
export interface SelectionInputs {
  readonly scopes: ScopedSettings;
  /** `global:<rev> project:<rev>`: changes whenever a settings file does. */
  readonly filesRevision: string;
  /** The files' revision plus the session scope: changes whenever any scope does. */
  readonly settingsRevision: string;
}

/**
 * Everything one catalog snapshot drives: the discovered snapshot, the snapshot as this session
 * sees it (enabled skills only), the command catalog built from that, and each skill's verdict.
 * A session holds exactly one view and reload replaces it whole (K-7), so the menu, prompt
 * context and Python routes can never read different catalogs.
 */
export interface SessionView {
  readonly discovered: CatalogSnapshot;
  readonly snapshot: CatalogSnapshot;
  readonly commands: CommandCatalog;
  readonly extensions: ExtensionState;
  readonly selection: SelectionInputs;
  /** Every discovered skill's enablement (D-4), by name. */
  readonly effective: Readonly<Record<string, Enablement>>;
}

/** Where a session's files are: what a walk visits and where its settings files live. */
export interface ViewSource {
  readonly workspace: string;
  readonly home: string;
  readonly stateDir: string;
  readonly install?: string;
}

/** What a reload changed in the catalog (K-7). */
export interface CatalogReload {
  readonly revision: string;
  readonly previousRevision: string;
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Skills this reload found that did not load (an error in their SKILL.md), with the first error each; one already broken before is not repeated. */
  readonly failed: readonly FailedSkill[];
  readonly skills: number;
}

/** A skill directory whose SKILL.md did not load: its folder's name and the first error. */
export interface FailedSkill {
  readonly name: string;
  readonly message: string;
}

/** What a reload changed: the catalog's skills (K-7) and the session's MCP servers (M-2). */
export interface ReloadResult extends CatalogReload {
  readonly mcp: McpReloadChange;
}

/** One walk of the skill roots and instruction files (S-9), reusing the parses `cache` kept; never throws for bad files. */
export function walkFiles(source: ViewSource, cache: ParseCache): Promise<FullDiscovery> {
  return discoverEverything({ workspace: source.workspace, home: source.home, ...(source.install ? { install: source.install } : {}) }, cache);
}

/** Reads the global and project settings files, each once; throws SettingsFileError for a malformed one (never treated as empty). */
export async function readSelection(source: ViewSource, session: Settings): Promise<SelectionInputs> {
  const [global, project] = await Promise.all([readSettings(globalSettingsTarget(source.stateDir)), readSettings(projectSettingsTarget(source.workspace, source.stateDir))]);
  return selectionOf({ global: global.settings, project: project.settings }, `global:${global.revision} project:${project.revision}`, session);
}

/** The same file settings under another session scope (D-4); reads nothing. */
export function withSessionScope(selection: SelectionInputs, session: Settings): SelectionInputs {
  return selectionOf(selection.scopes, selection.filesRevision, session);
}

function selectionOf(files: ScopedSettings, filesRevision: string, session: Settings): SelectionInputs {
  return {
    scopes: { global: files.global, project: files.project, session },
    filesRevision,
    settingsRevision: `${filesRevision} session:${JSON.stringify(session)}`,
  };
}

/** Builds the immutable view: only enabled skills, and with skills off no skills, instructions or skill commands. */
export function buildView(discovered: CatalogSnapshot, extensions: ExtensionState, selection: SelectionInputs): SessionView {
  const effective: Record<string, Enablement> = {};
  for (const entry of discovered.skills) effective[entry.name] = effectiveEnablement(entry.name, selection.scopes);
  const snapshot = selectSkills(discovered, (entry) => extensions.skills && effective[entry.name]!.enabled, { instructions: extensions.skills });
  return Object.freeze({
    discovered,
    snapshot,
    commands: buildCommandCatalog(snapshot, { skills: extensions.skills }),
    extensions: Object.freeze({ ...extensions }),
    selection,
    effective: Object.freeze(effective),
  });
}

/** Which skills a reload from `previous` to `next` added and removed. */
export function reloadResult(previous: SessionView, next: SessionView): CatalogReload {
  const before = new Set(previous.snapshot.skills.map((s) => s.name));
  const after = new Set(next.snapshot.skills.map((s) => s.name));
  return {
    revision: next.snapshot.revision,
    previousRevision: previous.snapshot.revision,
    added: [...after].filter((name) => !before.has(name)),
    removed: [...before].filter((name) => !after.has(name)),
    failed: newlyFailed(previous.discovered, next.discovered),
    skills: after.size,
  };
}

/** The skills with an error in `next` that had none in `previous`, by SKILL.md path, first error each. */
function newlyFailed(previous: CatalogSnapshot, next: CatalogSnapshot): FailedSkill[] {
  const broken = (snapshot: CatalogSnapshot) => new Set(snapshot.diagnostics.filter((d) => d.severity === "error").map((d) => d.path));
  const before = broken(previous);
  const failed = new Map<string, FailedSkill>();
  for (const diagnostic of next.diagnostics) {
    if (diagnostic.severity !== "error" || before.has(diagnostic.path) || failed.has(diagnostic.path)) continue;
    const folder = /^skill\.md$/i.test(basename(diagnostic.path)) ? basename(dirname(diagnostic.path)) : basename(diagnostic.path);
    failed.set(diagnostic.path, { name: folder, message: diagnostic.message });
  }
  return [...failed.values()];
}
