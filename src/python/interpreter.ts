import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { isExecutable, runProcess } from "./process.js";
import { compareVersions, MIN_IPYKERNEL_MAJOR } from "./requirements.js";

/** Deadline for one `python -c` probe (start, import ipykernel and zmq, print), in milliseconds. */
export const PYTHON_PROBE_TIMEOUT_MS = 20_000;

/** Where the interpreter came from: an explicit option, $ALBEDO_PYTHON, settings, or the managed venv. */
export type PythonSource = "option" | "ALBEDO_PYTHON" | "settings" | "managed";

/** Settings that may name an interpreter (lower priority than $ALBEDO_PYTHON). */
export interface PythonSettings {
  readonly python?: string;
}

export interface PythonCandidate {
  readonly path: string;
  readonly source: PythonSource;
}

export interface ModuleStatus {
  readonly importable: boolean;
  /** Installed distribution version, when known. */
  readonly version?: string;
  /** Why the import failed, as Python reported it. */
  readonly error?: string;
}

export interface PythonStatus extends PythonCandidate {
  /** Python's own version, e.g. "3.11.7". */
  readonly pythonVersion: string;
  /** sys.prefix of the interpreter. */
  readonly prefix: string;
  readonly isVenv: boolean;
  readonly ipykernel: ModuleStatus;
  readonly pyzmq: ModuleStatus;
  /** Installed versions of the distributions asked for in the probe (null = not installed). */
  readonly distributions: Readonly<Record<string, string | null>>;
  /** True when ipykernel >= MIN_IPYKERNEL_MAJOR and pyzmq both import. */
  readonly kernelReady: boolean;
}

/** The interpreter cannot be used at all (missing, not executable, or its probe failed). */
export class PythonUnavailableError extends Error {
  override readonly name = "PythonUnavailableError";
  constructor(message: string, readonly fix: string) {
    super(message);
  }
}

/** The managed venv directory: <install>/.venv. */
export function managedVenvDir(): string {
  return join(installDir(), ".venv");
}

/** The interpreter inside a venv directory. */
export function venvPython(venvDir: string): string {
  return join(venvDir, "bin", "python");
}

/** Which interpreter would be used, without running it: $ALBEDO_PYTHON, then settings, then the managed venv. */
export function pythonCandidate(env: NodeJS.ProcessEnv, settings?: PythonSettings): PythonCandidate {
  if (env.ALBEDO_PYTHON) return { path: resolve(env.ALBEDO_PYTHON), source: "ALBEDO_PYTHON" };
  if (settings?.python) return { path: resolve(settings.python), source: "settings" };
  return { path: venvPython(managedVenvDir()), source: "managed" };
}

/** Probes the chosen interpreter once; throws PythonUnavailableError when it is missing or does not run. */
export async function resolvePython(env: NodeJS.ProcessEnv, settings?: PythonSettings): Promise<PythonStatus> {
  return probePython(pythonCandidate(env, settings), env);
}

/** Returns the status unchanged when it can run a kernel; throws PythonUnavailableError naming what is missing. */
export function assertKernelReady(status: PythonStatus): PythonStatus {
  if (status.kernelReady) return status;
  const missing = [
    ipykernelMeetsMinimum(status.ipykernel) ? undefined : `ipykernel>=${MIN_IPYKERNEL_MAJOR} (${describeModule(status.ipykernel)})`,
    status.pyzmq.importable ? undefined : `pyzmq (${describeModule(status.pyzmq)})`,
  ].filter((item) => item !== undefined);
  throw new PythonUnavailableError(`${label(status)} cannot run a kernel: missing ${missing.join(" and ")}`, fixFor(status));
}

/** One-line description of a module's state, e.g. "7.4.0" or "not importable: ModuleNotFoundError...". */
export function describeModule(module: ModuleStatus): string {
  if (module.importable) return module.version ?? "version unknown";
  return `not importable${module.error ? `: ${module.error}` : ""}`;
}

/** True when ipykernel imports and its version is at least MIN_IPYKERNEL_MAJOR. */
export function ipykernelMeetsMinimum(module: ModuleStatus): boolean {
  return module.importable && module.version !== undefined && compareVersions(module.version, String(MIN_IPYKERNEL_MAJOR)) >= 0;
}

/** How to describe an interpreter in messages, e.g. "ALBEDO_PYTHON=/usr/bin/python3". */
export function label(candidate: PythonCandidate): string {
  switch (candidate.source) {
    case "ALBEDO_PYTHON": return `ALBEDO_PYTHON=${candidate.path}`;
    case "settings": return `the configured interpreter ${candidate.path}`;
    case "managed": return `the managed interpreter ${candidate.path}`;
    case "option": return `the interpreter ${candidate.path}`;
  }
}

/** The fix line for an interpreter that is missing or lacks the kernel requirements. */
export function fixFor(candidate: PythonCandidate): string {
  if (candidate.source === "managed") return "run `albedo setup`: it creates or repairs the managed environment and, when it cannot, says what to change; `albedo doctor` shows what is missing";
  return `install the requirements into it (\`${candidate.path} -m pip install 'ipykernel>=${MIN_IPYKERNEL_MAJOR}' pyzmq\`), or unset ${candidate.source === "ALBEDO_PYTHON" ? "ALBEDO_PYTHON" : "it"} to use the managed environment (\`albedo setup\`)`;
}

// Imports both modules so a broken install shows up here, not at kernel start; versions come from metadata.
const PROBE_SCRIPT = `
import json, sys
out = {"version": "%d.%d.%d" % tuple(sys.version_info[:3]), "prefix": sys.prefix,
       "venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix), "modules": {}, "dists": {}}
try:
    from importlib import metadata
except Exception:
    metadata = None
def dist_version(name):
    try:
        return metadata.version(name) if metadata else None
    except Exception:
        return None
for mod, dist in (("ipykernel", "ipykernel"), ("zmq", "pyzmq")):
    try:
        m = __import__(mod)
        out["modules"][mod] = {"importable": True, "version": dist_version(dist) or getattr(m, "__version__", None)}
    except Exception as e:
        out["modules"][mod] = {"importable": False, "error": "%s: %s" % (type(e).__name__, e)}
for name in sys.argv[1:]:
    out["dists"][name] = dist_version(name)
print(json.dumps(out))
`;
import { installDir } from "../platform/index.js";

interface ProbeOutput {
  version: string;
  prefix: string;
  venv: boolean;
  modules: Record<string, { importable: boolean; version?: string | null; error?: string }>;
  dists: Record<string, string | null>;
}

/** Runs one probe of `candidate`, also reporting installed versions of `distributions`; throws PythonUnavailableError when it cannot run. */
export async function probePython(candidate: PythonCandidate, env: NodeJS.ProcessEnv, distributions: readonly string[] = []): Promise<PythonStatus> {
  if (!isExecutable(candidate.path)) {
    const what = existsSync(candidate.path) ? "is not an executable file" : "does not exist";
    throw new PythonUnavailableError(`${label(candidate)} ${what}`, candidate.source === "managed" ? fixFor(candidate) : "point it at an existing Python 3 interpreter that has ipykernel>=7 and pyzmq, or unset it to use the managed environment (`albedo setup`)");
  }
  const result = await runProcess(candidate.path, ["-c", PROBE_SCRIPT, ...distributions], { env: probeEnv(env), timeoutMs: PYTHON_PROBE_TIMEOUT_MS });
  const lastLine = result.stdout.trim().split("\n").pop() ?? "";
  if (result.timedOut) throw new PythonUnavailableError(`${label(candidate)} did not answer within ${PYTHON_PROBE_TIMEOUT_MS / 1000} s when asked for its version and for ipykernel and pyzmq (importing them is what takes long)`, `run \`${candidate.path} -c "import ipykernel, zmq"\` to see how long it takes; a slow disk, a cold cache or a broken install are the usual causes. \`albedo doctor\` checks the rest`);
  let parsed: ProbeOutput;
  try {
    parsed = JSON.parse(lastLine) as ProbeOutput;
  } catch {
    const reason = result.spawnError ?? (result.stderr.trim().split("\n").slice(-3).join(" | ") || `exit code ${String(result.code)}`);
    throw new PythonUnavailableError(`${label(candidate)} failed to run its probe: ${reason}`, "point it at a working Python 3 interpreter");
  }
  return toStatus(candidate, parsed);
}

function toStatus(candidate: PythonCandidate, probe: ProbeOutput): PythonStatus {
  const module = (name: string): ModuleStatus => {
    const raw = probe.modules[name];
    if (raw === undefined) return { importable: false, error: "not probed" };
    return { importable: raw.importable, ...(raw.version ? { version: raw.version } : {}), ...(raw.error ? { error: raw.error } : {}) };
  };
  const ipykernel = module("ipykernel");
  const pyzmq = module("zmq");
  return {
    ...candidate,
    pythonVersion: probe.version,
    prefix: probe.prefix,
    isVenv: probe.venv,
    ipykernel,
    pyzmq,
    distributions: probe.dists,
    kernelReady: ipykernelMeetsMinimum(ipykernel) && pyzmq.importable,
  };
}

// The probe must see what a kernel would see, minus variables that make Python start elsewhere or print banners.
function probeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.PYTHONSTARTUP;
  delete copy.PYTHONINSPECT;
  return copy;
}
