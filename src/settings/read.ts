import { createHash } from "node:crypto";
import { readFileBounded } from "../platform/index.js";
import { SettingsFileError } from "./errors.js";
import { settingsDepthProblem, validateSettings, type Settings, type SettingsScope } from "./schema.js";

/** Bytes of one settings file; a larger file fails the read rather than being cut. */
export const MAX_SETTINGS_BYTES = 256 * 1024;
/** The revision of a settings file that does not exist. */
export const ABSENT_REVISION = "absent";

/** A settings file as read: its validated content and the revision of the exact bytes. */
export interface SettingsSnapshot {
  readonly settings: Settings;
  /** sha256 (hex) of the file's bytes, or ABSENT_REVISION. */
  readonly revision: string;
  /** The bytes the revision was taken from (empty when absent); lets a writer skip a no-op write. */
  readonly text: string;
}

/** The revision of a file holding `bytes`. */
export function settingsRevision(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Reads and validates one settings file. A missing file (or a missing parent directory) is
 * empty settings with revision ABSENT_REVISION; anything else unusable (a file nested deeper than
 * MAX_SETTINGS_DEPTH included) throws SettingsFileError.
 */
export async function readSettingsFile(file: string, scope: SettingsScope): Promise<SettingsSnapshot> {
  const bytes = await readBounded(file);
  if (bytes === undefined) return { settings: {}, revision: ABSENT_REVISION, text: "" };
  const text = decode(file, bytes);
  let value: unknown;
  try {
    value = JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text);
  } catch (error) {
    throw new SettingsFileError(file, "malformed_json", [{ path: "", message: `not valid JSON${jsonErrorPlace(text, (error as Error).message)} (${(error as Error).message})` }]);
  }
  const tooDeep = settingsDepthProblem(value);
  if (tooDeep) throw new SettingsFileError(file, "too_deep", [tooDeep]);
  const checked = validateSettings(value, scope);
  if (!checked.ok) throw new SettingsFileError(file, "invalid", checked.problems);
  return { settings: checked.settings, revision: settingsRevision(bytes), text };
}

/** The file's bytes, or undefined when it does not exist. */
async function readBounded(file: string): Promise<Buffer | undefined> {
  let found;
  try {
    found = await readFileBounded(file, MAX_SETTINGS_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new SettingsFileError(file, "unreadable", [{ path: "", message: `cannot open (${code ?? String(error)})` }]);
  }
  if (found.kind === "not_regular_file") throw new SettingsFileError(file, "not_regular_file", [{ path: "", message: "not a regular file" }]);
  if (found.kind === "oversize") throw oversize(file, found.size);
  return found.bytes;
}

function oversize(file: string, size: number): SettingsFileError {
  return new SettingsFileError(file, "oversize", [
    { path: "", message: `${size} bytes is over the ${MAX_SETTINGS_BYTES}-byte limit (MAX_SETTINGS_BYTES)` },
  ]);
}

function decode(file: string, bytes: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new SettingsFileError(file, "malformed_json", [{ path: "", message: "not valid UTF-8" }]);
  }
}

/** " at line L, column C" for a JSON.parse error that names a position in `text`, else "". */
function jsonErrorPlace(text: string, message: string): string {
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position === undefined) return "";
  const before = text.slice(0, Number(position)).split("\n");
  return ` at line ${before.length}, column ${before.at(-1)!.length + 1}`;
}
