import { buildCommandCatalog, type CommandCatalog } from "../commands/index.js";
import {
  effectiveEnablement, globalSettingsTarget, projectSettingsTarget, readSettings,
  type Enablement, type ScopedSettings, type Settings,
} from "../settings/index.js";
import { selectSkills } from "../skills/index.js";
import type { CatalogSnapshot } from "../skills/types.js";

/** Which extensions a session has on (K-8). `skills` depends on `python`, which is always on. */
export interface ExtensionState {
  readonly skills: boolean;
}

/** The settings that decide enablement, with the revisions of the files they came from. */
export interface SelectionInputs {
  readonly scopes: ScopedSettings;
  /** `global:<rev> project:<rev>`: changes whenever a settings file does. */
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

/** Reads the global and project settings files; throws SettingsFileError for a malformed one (never treated as empty). */
export async function readSelection(stateDir: string, workspace: string, session: Settings): Promise<SelectionInputs> {
  const [global, project] = await Promise.all([readSettings(globalSettingsTarget(stateDir)), readSettings(projectSettingsTarget(workspace, stateDir))]);
  return {
    scopes: { global: global.settings, project: project.settings, session },
    settingsRevision: `global:${global.revision} project:${project.revision} session:${JSON.stringify(session)}`,
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
