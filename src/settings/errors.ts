import type { SettingsProblem } from "./schema.js";

/** What is wrong with a settings file as found on disk. */
export type SettingsFileFault = "not_regular_file" | "oversize" | "malformed_json" | "too_deep" | "invalid" | "unreadable";

/**
 * A settings file that exists but cannot be used. Local (no wire code): the daemon decides how a
 * broken file reaches a client. The operation that met it fails; the file is never taken as empty.
 */
export class SettingsFileError extends Error {
  override readonly name = "SettingsFileError";
  constructor(
    readonly file: string,
    readonly fault: SettingsFileFault,
    readonly problems: readonly SettingsProblem[],
  ) {
    super(`settings file ${file}: ${problems.map(formatProblem).join("; ")}`);
  }
}

function formatProblem(problem: SettingsProblem): string {
  return problem.path.length > 0 ? `${problem.path}: ${problem.message}` : problem.message;
}
