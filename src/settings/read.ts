import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
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
    throw new SettingsFileError(file, "malformed_json", [{ path: "", message: `not valid JSON (${(error as Error).message})` }]);
  }
  const tooDeep = settingsDepthProblem(value);
  if (tooDeep) throw new SettingsFileError(file, "too_deep", [tooDeep]);
  const checked = validateSettings(value, scope);
  if (!checked.ok) throw new SettingsFileError(file, "invalid", checked.problems);
  return { settings: checked.settings, revision: settingsRevision(bytes), text };
}

/** The file's bytes, or undefined when it does not exist. */
async function readBounded(file: string): Promise<Buffer | undefined> {
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO planted at the path must not hang the read.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new SettingsFileError(file, "unreadable", [{ path: "", message: `cannot open (${code ?? String(error)})` }]);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new SettingsFileError(file, "not_regular_file", [{ path: "", message: "not a regular file" }]);
    if (stats.size > MAX_SETTINGS_BYTES) throw oversize(file, stats.size);
    const buffer = Buffer.alloc(MAX_SETTINGS_BYTES + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      // The file grew between fstat and read.
      if (filled > MAX_SETTINGS_BYTES) throw oversize(file, filled);
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
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
