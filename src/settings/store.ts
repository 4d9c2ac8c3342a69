import { realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AppError } from "../errors/index.js";
import { withSettingsLock } from "./lock.js";
import { ABSENT_REVISION, MAX_SETTINGS_BYTES, readSettingsFile, settingsRevision, type SettingsSnapshot } from "./read.js";
import { MAX_SETTINGS_DEPTH, settingsDepthProblem, validateSettings, type Settings } from "./schema.js";
import { ALBEDO_DIR_NAME, removeOrphanTemps, writeFileAtomic } from "../platform/index.js";

/** File name of a settings file in the state dir and in `<workspace>/.albedo`. */
export const SETTINGS_FILE_NAME = "settings.json";

/** A settings file on disk, its scope, and the state dir whose lock guards its writes. */
export interface SettingsTarget {
  readonly file: string;
  readonly scope: "global" | "project";
  readonly stateDir: string;
}

/** The global settings file, `<stateDir>/settings.json`. */
export function globalSettingsTarget(stateDir: string): SettingsTarget {
  return { file: join(stateDir, SETTINGS_FILE_NAME), scope: "global", stateDir };
}

/** The project settings file, `<workspace>/.albedo/settings.json`, written under the state dir's lock. */
export function projectSettingsTarget(workspace: string, stateDir: string): SettingsTarget {
  return { file: join(workspace, ALBEDO_DIR_NAME, SETTINGS_FILE_NAME), scope: "project", stateDir };
}

/**
 * True for a project target whose `.albedo` is the state dir itself: a workspace that contains the
 * state dir (albedo run in the home, with the default state dir). Its project file is the global
 * file, so the project scope has none of its own.
 */
export function isGlobalFileInProjectScope(target: SettingsTarget): boolean {
  if (target.scope !== "project") return false;
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  return real(dirname(target.file)) === real(target.stateDir);
}

/** Reads one target (no lock: writes are atomic renames). Throws SettingsFileError when the file is unusable. A project target that is the global file reads as absent. */
export function readSettings(target: SettingsTarget): Promise<SettingsSnapshot> {
  if (isGlobalFileInProjectScope(target)) return Promise.resolve({ settings: {}, revision: ABSENT_REVISION, text: "" });
  return readSettingsFile(target.file, target.scope);
}

export interface UpdateOptions {
  /** The revision the caller last saw; a different current revision fails with AppError "conflict". */
  readonly expectedRevision?: string;
}

/**
 * Applies `mutate` to the current settings under the state dir's lock and writes the result
 * atomically (0600). Returns the new snapshot. Throws, leaving the file untouched:
 * SettingsFileError when the current file is unusable; AppError "conflict" (data.currentRevision)
 * on a stale expectedRevision; AppError "invalid_params" (data.problems) when the result breaks
 * the schema; AppError "limit_exceeded" when it is over MAX_SETTINGS_BYTES or MAX_SETTINGS_DEPTH; AppError "timeout"
 * when the lock is not had in time.
 */
export function updateSettings(
  target: SettingsTarget,
  mutate: (current: Settings) => Settings,
  options: UpdateOptions = {},
): Promise<SettingsSnapshot> {
  if (isGlobalFileInProjectScope(target)) {
    const why = `the workspace contains the state dir, so its project settings file ${target.file} is the global settings file; change the global scope instead`;
    return Promise.reject(new AppError("invalid_params", why, { file: target.file }));
  }
  return withSettingsLock(target.stateDir, async () => {
    await removeOrphanTemps(target.file);
    const current = await readSettingsFile(target.file, target.scope);
    if (options.expectedRevision !== undefined && options.expectedRevision !== current.revision) {
      throw new AppError("conflict", `settings file ${target.file} changed since revision ${options.expectedRevision}`, {
        file: target.file,
        expectedRevision: options.expectedRevision,
        currentRevision: current.revision,
      });
    }
    const text = serialize(target, mutate(structuredClone(current.settings)));
    if (text === current.text) return current;
    await writeFileAtomic(target.file, text);
    return { settings: JSON.parse(text) as Settings, revision: settingsRevision(text), text };
  });
}

/** The text to write for `next`, validated as it will be read back (after a JSON round trip). */
function serialize(target: SettingsTarget, next: Settings): string {
  // Measured before JSON.stringify, which would overflow the stack on a value thousands of levels deep.
  const tooDeep = settingsDepthProblem(next);
  if (tooDeep) {
    throw new AppError("limit_exceeded", `new settings for ${target.file} ${tooDeep.message}`, { file: target.file, limit: MAX_SETTINGS_DEPTH });
  }
  const json = JSON.stringify(next, null, 2) as string | undefined;
  const text = json === undefined ? "" : json + "\n";
  const checked = validateSettings(json === undefined ? undefined : JSON.parse(json), target.scope);
  if (!checked.ok) {
    throw new AppError("invalid_params", `new settings for ${target.file} are invalid: ${checked.problems.map((p) => `${p.path || "(top)"}: ${p.message}`).join("; ")}`, {
      file: target.file,
      problems: checked.problems,
    });
  }
  const size = Buffer.byteLength(text);
  if (size > MAX_SETTINGS_BYTES) {
    throw new AppError("limit_exceeded", `new settings for ${target.file} are ${size} bytes; at most ${MAX_SETTINGS_BYTES} (MAX_SETTINGS_BYTES)`, {
      file: target.file,
      limit: MAX_SETTINGS_BYTES,
      value: size,
    });
  }
  return text;
}
