/**
 * Jupyter kernelspec discovery (K-1): the `kernels/<name>/kernel.json` search path of jupyter_core,
 * kernel.json validation, and the choice of how a session's kernel is launched.
 */
import { existsSync, statSync } from "node:fs";
import { lstat, readdir, stat } from "node:fs/promises";
import { delimiter, dirname, join, resolve, sep } from "node:path";
import { assertKernelReady, describePython, probePython, pythonCandidate, resolvePython, type PythonStatus } from "../python/index.js";
import { homeDir, readFileBounded } from "../platform/index.js";
import { MAX_KERNELSPECS, MAX_KERNEL_JSON_BYTES } from "./limits.js";

/** System-wide data dirs, searched after the user and environment ones (jupyter_core on Unix). */
export const SYSTEM_JUPYTER_DIRS: readonly string[] = ["/usr/local/share/jupyter", "/usr/share/jupyter"];

const CONNECTION_FILE = "{connection_file}";
const RESOURCE_DIR = "{resource_dir}";
// jupyter_client's rule for kernelspec directory names (compared lowercased).
const KERNEL_NAME = /^[a-z0-9._-]+$/;

export interface KernelSpec {
  readonly argv: readonly string[];
  readonly displayName: string;
  readonly language: string;
  readonly interruptMode: "signal" | "message";
  readonly env: Readonly<Record<string, string>>;
}

export interface KernelSpecEntry {
  /** Lowercased directory name, as Jupyter keys kernelspecs. */
  readonly name: string;
  /** The kernelspec's resource directory. */
  readonly dir: string;
  readonly file: string;
  readonly spec: KernelSpec;
}

export interface KernelSpecProblem {
  readonly name: string;
  readonly file: string;
  readonly message: string;
}

export interface KernelSpecListing {
  /** Winning kernelspecs (earlier search dirs win), sorted by name. */
  readonly specs: readonly KernelSpecEntry[];
  /** Kernelspecs that won their name but cannot be used, and cut listings. */
  readonly problems: readonly KernelSpecProblem[];
  /** The `kernels` directories searched, in order. */
  readonly searched: readonly string[];
}

/** How to start one kernel, and where that choice came from (for messages and `albedo doctor`). */
export interface ResolvedKernelLaunch {
  readonly argv: string[];
  readonly env?: Record<string, string>;
  readonly interruptMode: "signal" | "message";
  readonly displayName?: string;
  readonly source: string;
}

/** A kernelspec that is missing, malformed or unreadable; the message names the file. */
export class KernelSpecError extends Error {
  override readonly name = "KernelSpecError";
}

/** The `kernels` directories to search, in jupyter_core's `jupyter_path("kernels")` order, plus ~/.ipython/kernels. */
export function kernelSpecDirs(env: NodeJS.ProcessEnv, pythonPath?: string): string[] {
  const home = homeDir(env);
  const explicit = (env.JUPYTER_PATH ?? "").split(delimiter).filter((p) => p.length > 0).map(stripTrailingSep);
  const prefix = environmentPrefix(pythonPath ?? pythonCandidate(env).path);
  const user = [jupyterDataDir(env, home)];
  // A venv's interpreter has no user site, so only a plain interpreter adds the user base.
  if (prefix === undefined) user.push(join(env.PYTHONUSERBASE || join(home, ".local"), "share", "jupyter"));
  const environment = prefix === undefined ? [] : [join(prefix, "share", "jupyter")].filter((d) => !SYSTEM_JUPYTER_DIRS.includes(d));
  const middle = preferEnvironment(env, prefix) ? [...environment, ...user] : [...user, ...environment];
  const dataDirs = [...explicit, ...middle, ...SYSTEM_JUPYTER_DIRS].map((d) => join(d, "kernels"));
  return [...new Set([...dataDirs, join(env.IPYTHONDIR || join(home, ".ipython"), "kernels")])];
}

/** The user's Jupyter data dir: $JUPYTER_DATA_DIR, else the platform's (as jupyter_core). */
export function jupyterDataDir(env: NodeJS.ProcessEnv, home: string): string {
  if (env.JUPYTER_DATA_DIR) return env.JUPYTER_DATA_DIR;
  if (process.platform === "darwin") return join(home, "Library", "Jupyter");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "jupyter");
}

// sys.prefix without running Python: known only for venvs and conda envs, skipped otherwise.
function environmentPrefix(pythonPath: string): string | undefined {
  const prefix = dirname(dirname(pythonPath));
  return existsSync(join(prefix, "pyvenv.cfg")) || existsSync(join(prefix, "conda-meta")) ? prefix : undefined;
}

function preferEnvironment(env: NodeJS.ProcessEnv, prefix: string | undefined): boolean {
  const flag = env.JUPYTER_PREFER_ENV_PATH;
  if (flag !== undefined) return !["no", "n", "false", "off", "0", "0.0"].includes(flag.toLowerCase());
  if (prefix === undefined) return false;
  try {
    return statSync(prefix).uid === process.getuid?.();
  } catch {
    return false;
  }
}

function stripTrailingSep(path: string): string {
  return path.length > 1 && path.endsWith(sep) ? path.slice(0, -1) : path;
}

/** Every usable kernelspec on the search path; malformed ones become problems, never exceptions. */
export async function listKernelSpecs(env: NodeJS.ProcessEnv, pythonPath?: string): Promise<KernelSpecListing> {
  const searched = kernelSpecDirs(env, pythonPath);
  const seen = new Set<string>();
  const specs: KernelSpecEntry[] = [];
  const problems: KernelSpecProblem[] = [];
  let dropped = 0;
  for (const dir of searched) {
    for (const entry of await kernelDirNames(dir)) {
      const name = entry.toLowerCase();
      if (seen.has(name)) continue;
      seen.add(name);
      if (seen.size > MAX_KERNELSPECS) {
        dropped++;
        continue;
      }
      const file = join(dir, entry, "kernel.json");
      try {
        specs.push({ name: checkedName(name, file), dir: join(dir, entry), file, spec: await readKernelSpec(file) });
      } catch (error) {
        if (!(error instanceof KernelSpecError)) throw error;
        problems.push({ name, file, message: error.message });
      }
    }
  }
  if (dropped > 0) problems.push({ name: "", file: "", message: `${dropped} more kernelspecs not examined (MAX_KERNELSPECS=${MAX_KERNELSPECS})` });
  specs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { specs, problems, searched };
}

/** The first kernelspec named `name` (case-insensitive) on the search path, or undefined; throws KernelSpecError when it is malformed. */
export async function findKernelSpec(name: string, env: NodeJS.ProcessEnv, pythonPath?: string): Promise<KernelSpecEntry | undefined> {
  const wanted = checkedName(name.toLowerCase(), `kernelspec name "${name}"`);
  for (const dir of kernelSpecDirs(env, pythonPath)) {
    const entry = (await kernelDirNames(dir)).find((candidate) => candidate.toLowerCase() === wanted);
    if (entry === undefined) continue;
    const file = join(dir, entry, "kernel.json");
    return { name: wanted, dir: join(dir, entry), file, spec: await readKernelSpec(file) };
  }
  return undefined;
}

function checkedName(name: string, where: string): string {
  if (!KERNEL_NAME.test(name)) throw new KernelSpecError(`${where}: invalid kernelspec name "${name}" (letters, digits, ".", "_" and "-" only)`);
  return name;
}

// Sorted so that two case-variants in one directory resolve the same way every time.
async function kernelDirNames(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names.filter((name) => isFile(join(dir, name, "kernel.json"))).sort();
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Reads and validates one kernel.json (at most MAX_KERNEL_JSON_BYTES); throws KernelSpecError naming the file. */
export async function readKernelSpec(file: string): Promise<KernelSpec> {
  let found;
  try {
    found = await readFileBounded(file, MAX_KERNEL_JSON_BYTES);
  } catch (error) {
    throw new KernelSpecError(`${file}: cannot read kernel.json: ${(error as Error).message}`);
  }
  if (found.kind === "not_regular_file") throw new KernelSpecError(`${file}: kernel.json is ${found.what}, not a regular file`);
  if (found.kind === "oversize") throw new KernelSpecError(`${file}: kernel.json is ${found.size} bytes, over MAX_KERNEL_JSON_BYTES=${MAX_KERNEL_JSON_BYTES}`);
  const text = found.bytes.toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KernelSpecError(`${file}: kernel.json is not valid JSON: ${(error as Error).message}`);
  }
  return validateKernelSpec(value, file);
}

/** Checks a parsed kernel.json; throws KernelSpecError listing every problem, prefixed by `file`. */
export function validateKernelSpec(value: unknown, file: string): KernelSpec {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new KernelSpecError(`${file}: kernel.json must hold a JSON object`);
  const raw = value as Record<string, unknown>;
  const errors: string[] = [];
  const argv = raw.argv;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) errors.push("argv must be a non-empty array of strings");
  else if (!argv.some((a: string) => a.includes(CONNECTION_FILE))) errors.push(`argv must contain the ${CONNECTION_FILE} placeholder`);
  if (typeof raw.display_name !== "string" || raw.display_name.trim().length === 0) errors.push("display_name must be a non-empty string");
  if (typeof raw.language !== "string" || raw.language.trim().length === 0) errors.push("language must be a non-empty string");
  const mode = raw.interrupt_mode ?? "signal";
  if (mode !== "signal" && mode !== "message") errors.push(`interrupt_mode must be "signal" or "message", got ${JSON.stringify(mode)}`);
  const env = raw.env ?? {};
  if (typeof env !== "object" || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === "string")) {
    errors.push("env must be an object mapping names to strings");
  }
  if (errors.length > 0) throw new KernelSpecError(`${file}: malformed kernel.json: ${errors.join("; ")}`);
  return {
    argv: argv as string[],
    displayName: raw.display_name as string,
    language: raw.language as string,
    interruptMode: mode as "signal" | "message",
    env: { ...(env as Record<string, string>) },
  };
}

/**
 * How to launch a session's kernel: the named kernelspec when one is given, else the resolved
 * interpreter (`opts.python`, $ALBEDO_PYTHON, settings, or the managed venv) running ipykernel.
 * Throws KernelSpecError (unknown or malformed kernelspec) or PythonUnavailableError (no usable interpreter).
 */
export async function resolveKernelLaunch(opts: { kernelspec?: string; python?: string }, env: NodeJS.ProcessEnv): Promise<ResolvedKernelLaunch> {
  if (opts.kernelspec !== undefined) {
    const entry = await findKernelSpec(opts.kernelspec, env, opts.python);
    if (entry === undefined) {
      throw new KernelSpecError(`no kernelspec named "${opts.kernelspec}" in ${kernelSpecDirs(env, opts.python).join(", ")}`);
    }
    const { spec } = entry;
    return {
      argv: spec.argv.map((arg) => arg.split(RESOURCE_DIR).join(entry.dir)),
      ...(Object.keys(spec.env).length > 0 ? { env: { ...spec.env } } : {}),
      interruptMode: spec.interruptMode,
      displayName: spec.displayName,
      source: `kernelspec ${entry.name} (${entry.file})`,
    };
  }
  const status = await kernelReadyPython(opts.python, env);
  return {
    argv: [status.path, "-m", "ipykernel_launcher", "-f", CONNECTION_FILE],
    interruptMode: "signal",
    displayName: `Python ${status.pythonVersion} (albedo)`,
    source: describePython(status),
  };
}

/**
 * Interpreters already found kernel-ready, by path and file identity: probing costs a Python start
 * (hundreds of ms), and a session open should not pay it every time. Only successes are kept; a
 * replaced interpreter has a new identity and is probed again.
 */
const readyInterpreters = new Map<string, PythonStatus>();
/** Probes under way, by the same identity: sessions opening together share one Python start. */
const probesUnderWay = new Map<string, Promise<PythonStatus>>();

async function kernelReadyPython(python: string | undefined, env: NodeJS.ProcessEnv): Promise<PythonStatus> {
  const candidate = python !== undefined ? { path: resolve(python), source: "option" as const } : pythonCandidate(env);
  // Both the link (a venv's python is one, remade by a new venv) and its target identify the interpreter.
  const identity = await Promise.all([lstat(candidate.path), stat(candidate.path)]).then(
    ([link, target]) => `${candidate.path}:${link.ino}:${link.mtimeMs}:${target.dev}:${target.ino}:${target.mtimeMs}`,
    () => undefined,
  );
  const known = identity === undefined ? undefined : readyInterpreters.get(identity);
  if (known !== undefined) return known;
  const probe = () => (python !== undefined ? probePython(candidate, env) : resolvePython(env));
  if (identity === undefined) return assertKernelReady(await probe());
  let probing = probesUnderWay.get(identity);
  if (probing === undefined) {
    probing = probe().finally(() => probesUnderWay.delete(identity));
    probesUnderWay.set(identity, probing);
  }
  const status = assertKernelReady(await probing);
  readyInterpreters.set(identity, status);
  return status;
}
