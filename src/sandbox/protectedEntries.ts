/**
 * The workspace's protected top-level entries (`.albedo`, `.agents`): kept read-only in a kernel's
 * sandbox so that it cannot plant skills or settings there, made when missing (a bind needs a
 * directory to cover), and removed again once no session uses one a plan made.
 */
import { lstatSync, mkdirSync, readdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { ALBEDO_DIR_NAME, isHeldOpen, type FileIdentity } from "../platform/index.js";
import { traceRealPath } from "./paths.js";
import type { ExposureRequest, PlanNote, SandboxPlaces } from "./plan.js";

/** Top-level workspace entries that hold the workspace skill roots and project settings; kept read-only in the sandbox. */
const PROTECTED_WORKSPACE_DIRS: readonly string[] = [ALBEDO_DIR_NAME, ".agents"];

/**
 * Protected entries a plan of this process made and that are still there, by identity: a later plan
 * of this process that binds one takes on removing it, so the last session using it removes it.
 */
const made = new Map<string, FileIdentity>();
const identityKey = (entry: FileIdentity) => `${entry.dev}:${entry.ino}:${entry.path}`;

/**
 * Makes sure the protected top-level entries exist (a kernel could otherwise create one to plant
 * skills or settings, or shadow the skills of another root) and asks for each to be bound
 * read-only. The ones it had to make, or that another plan of this process made, go into
 * `created`. An entry that is the state dir (a workspace holding it, such as the home) is left to
 * the state dir's hide.
 */
export function protectedEntries(places: SandboxPlaces, notes: PlanNote[], created: FileIdentity[]): ExposureRequest[] {
  return PROTECTED_WORKSPACE_DIRS.flatMap((name) => {
    const path = join(places.workspace, name);
    if (traceRealPath(path)?.real === places.stateDir) return [];
    try {
      mkdirSync(path);
      const info = lstatSync(path, { bigint: true });
      const entry = { path, dev: info.dev, ino: info.ino };
      made.set(identityKey(entry), entry);
      created.push(entry);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        notes.push({ path, message: `could not create it to keep it read-only in the sandbox (${(error as Error).message}); a kernel can create it` });
        return [];
      }
      const earlier = madeEarlier(path);
      if (earlier !== undefined) created.push(earlier);
    }
    return [{ path, kind: "ro" as const, what: "workspace skill directory" }];
  });
}

/** The entry at `path` when a plan of this process made it and it is still that directory. */
function madeEarlier(path: string): FileIdentity | undefined {
  try {
    const info = lstatSync(path, { bigint: true });
    return made.get(identityKey({ path, dev: info.dev, ino: info.ino }));
  } catch {
    return undefined;
  }
}

/**
 * Removes each directory a plan made, so that sessions leave no empty `.agents` or `.albedo`
 * behind: only while it is still that directory (not a link or a replacement), still empty, and
 * open in no process. Every live plan holds its protected entries open, so one still in use by
 * another session stays: removing it would lift that sandbox's read-only mount there and let its
 * kernel create the entry. A plan of this process that uses it removes it when it closes; one of
 * another process leaves it.
 */
export function removeUnused(created: readonly FileIdentity[]): void {
  for (const entry of created) {
    try {
      const now = lstatSync(entry.path, { bigint: true });
      if (!now.isDirectory() || now.dev !== entry.dev || now.ino !== entry.ino) {
        made.delete(identityKey(entry));
        continue;
      }
      if (isHeldOpen(entry)) continue;
      made.delete(identityKey(entry));
      if (readdirSync(entry.path).length === 0) rmdirSync(entry.path);
    } catch {
      // Gone already, or filled meanwhile (ENOTEMPTY): either way it is not ours to remove.
      made.delete(identityKey(entry));
    }
  }
}
