/**
 * A workspace's package layer (N-5): a small venv in the state dir, one per workspace (named by a
 * hash of its real path), over the interpreter the session's kernel runs. A sandboxed kernel runs
 * from it, so `%pip install` and `!pip install` put packages there, which every later sandboxed
 * session of that workspace sees; the interpreter's own packages stay visible (pip counts them as
 * installed and, since they lie outside the layer's prefix, never tries to remove them from the
 * read-only environment: an upgrade lands in the layer, ahead of them).
 *
 * The host makes the layer once, in a fresh directory it renames into place, and records beside it
 * (in a file the kernel cannot reach) which workspace and interpreter it was made for. Once a kernel
 * has run in it, everything in it is the kernel's: the host only measures it (lstat, never following
 * a link) and removes it, and never imports or runs anything from it (see kernelWrites.ts).
 */
import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../platform/index.js";
import { MAX_PACKAGE_LAYER_ENTRIES } from "./limits.js";
import type { InterpreterFacts } from "./python.js";

/** The state dir's directory of package layers: `<hash>/` is a layer, `<hash>.json` the host's record of it. */
export const PACKAGES_DIR = "packages";
/** Bytes of a layer's record the host reads; a longer one counts as missing. */
const MAX_RECORD_BYTES = 64 * 1024;
/** Directories one step of a layer's measure reads at once. */
const MEASURE_DIRS_AT_ONCE = 64;
/** Hex digits of the workspace hash that name its layer. */
const KEY_DIGITS = 24;
/** The file in the layer's site-packages that adds the interpreter's own site-packages after the layer's. */
export const BASE_PTH = "_albedo_base.pth";

/** The host's record of one layer, beside it in PACKAGES_DIR. */
export interface LayerRecord {
  readonly workspace: string;
  readonly base: string;
  readonly version: string;
  readonly sites: readonly string[];
}

export interface PackageLayer {
  readonly dir: string;
  /** The interpreter a sandboxed kernel runs: the layer's `bin/python`, a link to the base interpreter. */
  readonly python: string;
  /** What the layer holds now, in bytes (lstat sizes of everything in it). */
  readonly bytes: number;
  /** True when it was measured over `quotaBytes` (or holds more than MAX_PACKAGE_LAYER_ENTRIES entries). */
  readonly over: boolean;
  /** Set when an old layer was removed because it was made for another interpreter. */
  readonly cleared?: string;
}

/** The layer directory of the workspace whose real path is `workspaceReal`. */
export function packageLayerDir(stateDir: string, workspaceReal: string): string {
  return join(stateDir, PACKAGES_DIR, createHash("sha256").update(workspaceReal).digest("hex").slice(0, KEY_DIGITS));
}

const recordFile = (dir: string) => `${dir}.json`;

/** The host's record of the layer at `dir`, or undefined when it is missing or unreadable. */
export async function readLayerRecord(dir: string): Promise<LayerRecord | undefined> {
  try {
    const text = await readFile(recordFile(dir), "utf8");
    if (text.length > MAX_RECORD_BYTES) return undefined;
    const record = JSON.parse(text) as Partial<LayerRecord>;
    if (typeof record.workspace !== "string" || typeof record.base !== "string" || typeof record.version !== "string" || !Array.isArray(record.sites)) return undefined;
    return record as LayerRecord;
  } catch {
    return undefined;
  }
}

/**
 * The layer of `workspaceReal` over the interpreter described by `facts`, made when missing and
 * remade (its packages removed) when it was made for another interpreter; measured against
 * `quotaBytes`. Two sessions making it at once both end with the same one layer.
 */
export async function preparePackageLayer(stateDir: string, workspaceReal: string, facts: InterpreterFacts, quotaBytes: number): Promise<PackageLayer> {
  const dir = packageLayerDir(stateDir, workspaceReal);
  await mkdir(dirname(dir), { recursive: true, mode: 0o700 });
  const record: LayerRecord = { workspace: workspaceReal, base: facts.base, version: facts.version, sites: [...facts.sites] };
  const exists = await lstat(dir).then((info) => info.isDirectory(), () => false);
  const known = await readLayerRecord(dir);
  let cleared: string | undefined;
  if (exists && JSON.stringify(known) !== JSON.stringify(record)) {
    cleared = known === undefined ? "it had no record of the interpreter it was made for" : `it was made for ${known.base} (Python ${known.version})`;
    await clearPackageLayer(dir);
  }
  if (!exists || cleared !== undefined) await makeLayer(dir, facts);
  await writeFileAtomic(recordFile(dir), JSON.stringify(record));
  const measured = await measurePackageLayer(dir);
  const over = measured.bytes > quotaBytes || measured.truncated;
  return { dir, python: join(dir, "bin", "python"), bytes: measured.bytes, over, ...(cleared !== undefined ? { cleared } : {}) };
}

/** Makes the layer in a fresh directory beside it and renames it into place; another session's layer made meanwhile wins. */
async function makeLayer(dir: string, facts: InterpreterFacts): Promise<void> {
  const fresh = await mkdtemp(`${dir}.new-`);
  try {
    const site = join(fresh, "lib", `python${facts.version}`, "site-packages");
    await mkdir(site, { recursive: true });
    await mkdir(join(fresh, "bin"));
    await writeFile(join(fresh, "pyvenv.cfg"), `home = ${dirname(facts.base)}\ninclude-system-site-packages = false\nversion = ${facts.version}\n`);
    await symlink(facts.base, join(fresh, "bin", "python"));
    for (const name of ["python3", `python${facts.version}`]) await symlink("python", join(fresh, "bin", name));
    // `!pip` finds these first on PATH; they run pip (from the interpreter's packages) with the layer's python, so it installs here.
    const shim = `#!${join(dir, "bin", "python")}\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n`;
    for (const name of ["pip", "pip3", `pip${facts.version}`]) {
      await writeFile(join(fresh, "bin", name), shim);
      await chmod(join(fresh, "bin", name), 0o755);
    }
    // addsitedir (not a bare path line) so the interpreter's own .pth files take effect too.
    await writeFile(join(site, BASE_PTH), facts.sites.map((path) => `import site; site.addsitedir(${JSON.stringify(path)})\n`).join(""));
    await rename(fresh, dir).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    });
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
}

/** Removes the layer at `dir` and its record (links in it are removed, never followed). */
export async function clearPackageLayer(dir: string): Promise<void> {
  // Renamed aside first, so a session starting meanwhile makes a fresh one rather than using half of this.
  const aside = `${dir}.old-${process.pid}-${Date.now()}`;
  const moved = await rename(dir, aside).then(() => true, (error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return false;
    throw error;
  });
  await rm(recordFile(dir), { force: true });
  if (moved) await rm(aside, { recursive: true, force: true });
}

/**
 * What the layer at `dir` holds: the lstat sizes of its entries, walked without following links;
 * `truncated` past MAX_PACKAGE_LAYER_ENTRIES. Up to MEASURE_DIRS_AT_ONCE directories are read
 * together, so the walk of a layer with a large package takes a fraction of a second, off the
 * event loop.
 */
export async function measurePackageLayer(dir: string): Promise<{ bytes: number; entries: number; truncated: boolean }> {
  let bytes = 0;
  let entries = 0;
  let pending = [dir];
  while (pending.length > 0) {
    const batch = pending.slice(0, MEASURE_DIRS_AT_ONCE);
    pending = pending.slice(MEASURE_DIRS_AT_ONCE);
    const listed = await Promise.all(batch.map(async (current) => ({ current, names: await readdir(current).catch(() => [] as string[]) })));
    for (const { names } of listed) entries += names.length;
    if (entries > MAX_PACKAGE_LAYER_ENTRIES) return { bytes, entries, truncated: true };
    const paths = listed.flatMap(({ current, names }) => names.map((name) => join(current, name)));
    const infos = await Promise.all(paths.map((path) => lstat(path).then((info) => ({ path, info }), () => undefined)));
    for (const found of infos) {
      if (found === undefined) continue;
      bytes += found.info.size;
      if (found.info.isDirectory()) pending.push(found.path);
    }
  }
  return { bytes, entries, truncated: false };
}
