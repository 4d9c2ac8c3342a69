import type { BigIntStats } from "node:fs";
import { opendir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { fsProblem, probe } from "./files.js";
import { fileKind } from "../platform/index.js";
import { checkGuard, checkPinned } from "./pinning.js";
import { MAX_RESOURCE_DEPTH } from "./limits.js";
import type { Diagnostic, PathGuard, SkillEntry } from "./types.js";
import { MAX_RESOURCES, MAX_RESOURCE_DIAGNOSTICS, MAX_RESOURCE_ENTRIES } from "./limits.js";


export { MAX_RESOURCE_DEPTH };

/** A skill's resource paths (relative, `/`-separated, sorted) and what the walk had to skip. */
export interface ResourceListing {
  readonly resources: string[];
  readonly diagnostics: Diagnostic[];
}

interface Walk {
  readonly files: string[];
  filesDropped: number;
  entries: number;
  entriesCut: boolean;
  readonly diagnostics: Diagnostic[];
  diagnosticsDropped: number;
  /** Bound cuts, kept apart so they are never crowded out by ordinary diagnostics. */
  readonly cuts: Diagnostic[];
  readonly guard: PathGuard | undefined;
}

/** Slots reserved below MAX_RESOURCE_DIAGNOSTICS for the two bound cuts and the dropped-count note. */
const RESERVED_DIAGNOSTICS = 3;

/**
 * Lists the regular files under the installed skill directory, following links, without opening
 * any of them. SKILL.md is included. Throws only what checkPinned throws; everything
 * found on the way (cycles, broken links, special files, bounds) is a diagnostic.
 */
export async function listResources(entry: SkillEntry, guard?: PathGuard): Promise<ResourceListing> {
  await checkPinned(entry);
  await checkGuard(entry, guard);
  const walk: Walk = { files: [], filesDropped: 0, entries: 0, entriesCut: false, diagnostics: [], diagnosticsDropped: 0, cuts: [], guard };
  const root = await stat(entry.dir, { bigint: true });
  await walkDirectory(walk, entry.dir, "", [identityKey(root)]);
  const diagnostics = [...walk.diagnostics];
  if (walk.diagnosticsDropped > 0) {
    const message = `${walk.diagnosticsDropped} more diagnostics dropped; the limit is MAX_RESOURCE_DIAGNOSTICS = ${MAX_RESOURCE_DIAGNOSTICS}`;
    diagnostics.push(warning(entry.dir, "diagnostic_limit", message));
  }
  if (walk.filesDropped > 0) {
    const message = `${walk.filesDropped} more files not listed; the limit is MAX_RESOURCES = ${MAX_RESOURCES}`;
    diagnostics.push(warning(entry.dir, "resource_limit", message));
  }
  return { resources: [...walk.files].sort(), diagnostics: [...diagnostics, ...walk.cuts] };
}

/** Visits one directory; `ancestors` holds the (dev, ino) keys of the real directories on the path here. */
async function walkDirectory(walk: Walk, dirPath: string, relDir: string, ancestors: readonly string[]): Promise<void> {
  const names = await readNames(walk, dirPath);
  for (const name of names) {
    const path = join(dirPath, name);
    const rel = relDir === "" ? name : `${relDir}/${name}`;
    if (name.includes("\\")) {
      note(walk, path, "resource_name_refused", `${path}: skipped; a resource name may not contain a backslash`);
      continue;
    }
    if (walk.guard && !(await guarded(walk.guard, path))) {
      note(walk, path, "outside_sandbox", `${path} resolves to a place this session's sandbox hides; skipped`);
      continue;
    }
    const found = await probe(path);
    if (found.kind === "missing") continue; // removed since the directory was read
    if (found.kind === "problem") note(walk, path, found.problem.code, found.problem.message);
    else if (found.stats.isFile()) addFile(walk, rel);
    else if (found.stats.isDirectory()) await enterDirectory(walk, path, rel, ancestors, found.stats);
    // Special files are never opened: a FIFO or device could block or stream forever.
    else note(walk, path, "not_regular_file", `${path} is ${fileKind(found.stats)}; skipped`);
  }
}

async function enterDirectory(walk: Walk, path: string, rel: string, ancestors: readonly string[], stats: BigIntStats): Promise<void> {
  const key = identityKey(stats);
  if (ancestors.includes(key)) {
    note(walk, path, "link_to_ancestor", `${path} links back to a directory above it; skipped`);
    return;
  }
  if (ancestors.length > MAX_RESOURCE_DEPTH) {
    note(walk, path, "resource_depth_limit", `${path}: not listed; deeper than MAX_RESOURCE_DEPTH = ${MAX_RESOURCE_DEPTH} directory levels`);
    return;
  }
  await walkDirectory(walk, path, rel, [...ancestors, key]);
}

/** The sorted names in a directory, reading no more than the remaining entry budget (plus one to detect the cut). */
async function readNames(walk: Walk, dirPath: string): Promise<string[]> {
  if (walk.entriesCut) return [];
  const names: string[] = [];
  try {
    const dir = await opendir(dirPath);
    for await (const dirent of dir) {
      if (walk.entries >= MAX_RESOURCE_ENTRIES) {
        walk.entriesCut = true;
        const message = `${dirPath}: traversal stopped after MAX_RESOURCE_ENTRIES = ${MAX_RESOURCE_ENTRIES} entries; the rest was not examined`;
        walk.cuts.push(warning(dirPath, "resource_entries_limit", message));
        break;
      }
      walk.entries++;
      names.push(dirent.name);
    }
  } catch (error) {
    const problem = fsProblem(error, dirPath);
    note(walk, dirPath, problem.code, problem.message);
  }
  return names.sort();
}

/** Whether the guard admits what `path` resolves to; an unresolvable path is left to probe() to report. */
async function guarded(guard: PathGuard, path: string): Promise<boolean> {
  const real = await realpath(path).catch(() => undefined);
  return real === undefined || guard(real);
}

function addFile(walk: Walk, rel: string): void {
  if (walk.files.length < MAX_RESOURCES) walk.files.push(rel);
  else walk.filesDropped++;
}

function note(walk: Walk, path: string, code: string, message: string): void {
  if (walk.diagnostics.length < MAX_RESOURCE_DIAGNOSTICS - RESERVED_DIAGNOSTICS) walk.diagnostics.push(warning(path, code, message));
  else walk.diagnosticsDropped++;
}

function warning(path: string, code: string, message: string): Diagnostic {
  return { severity: "warning", code, path, message };
}

function identityKey(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}`;
}
