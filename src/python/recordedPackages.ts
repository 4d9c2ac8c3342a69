import { existsSync, openSync, readSync, closeSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { MAX_EXTRA_PACKAGES, MAX_RECORDED_PACKAGES_BYTES } from "./limits.js";
import { packageProblem, uniquePackages } from "./packages.js";

/**
 * The file in a venv that lists the extra packages `albedo setup` installed into it (`--with` and
 * `python.packages`), so `albedo doctor` can list a package given once with `--with` that no
 * settings file names. Only albedo setup writes it; a file that does not parse reads as empty.
 */
export const RECORDED_PACKAGES_FILE = "albedo-packages.json";

/** The venv an interpreter path belongs to (`VENV/bin/python`), or undefined when it is not in one. */
export function venvOfInterpreter(python: string): string | undefined {
  const venv = dirname(dirname(python));
  return existsSync(join(venv, "pyvenv.cfg")) ? venv : undefined;
}

/** The requirements a venv's record holds, at most MAX_EXTRA_PACKAGES, each a plain requirement; [] when there is none. */
export function recordedPackages(venv: string | undefined): string[] {
  if (venv === undefined) return [];
  let text: string;
  try {
    const fd = openSync(join(venv, RECORDED_PACKAGES_FILE), "r");
    try {
      const buffer = Buffer.alloc(MAX_RECORDED_PACKAGES_BYTES);
      text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (!Array.isArray(value)) return [];
    return value.filter((item): item is string => packageProblem(item) === undefined).slice(0, MAX_EXTRA_PACKAGES);
  } catch {
    return [];
  }
}

/** Adds `packages` to the venv's record (a newer requirement for the same distribution replaces the older one), written whole by rename. */
export function recordPackages(venv: string, packages: readonly string[]): void {
  if (packages.length === 0) return;
  const all = uniquePackages([packages, recordedPackages(venv)]).slice(0, MAX_EXTRA_PACKAGES);
  const file = join(venv, RECORDED_PACKAGES_FILE);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(all, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}
