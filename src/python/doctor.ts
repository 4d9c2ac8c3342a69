import { accessSync, constants, statSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import {
  describeModule,
  fixFor,
  ipykernelMeetsMinimum,
  label,
  probePython,
  pythonCandidate,
  PythonUnavailableError,
  type PythonSettings,
  type PythonStatus,
} from "./interpreter.js";
import { judgePackages, packageName, type PackageState } from "./packages.js";
import { recordedPackages, venvOfInterpreter } from "./recordedPackages.js";
import { compareVersions, MIN_IPYKERNEL_MAJOR } from "./requirements.js";
import { stateDir } from "../platform/index.js";

/** Oldest Node.js the runtime supports (package.json "engines"). */
export const MIN_NODE_VERSION = "20.19.0";

export type CheckStatus = "ok" | "warn" | "fail";

export interface DoctorCheck {
  readonly name: string;
  readonly status: CheckStatus;
  readonly detail: string;
  /** What to do about a warn or fail; null when the check passed. */
  readonly fix: string | null;
}

export interface DoctorReport {
  /** True when no check failed (warnings allowed). */
  readonly ok: boolean;
  readonly checks: readonly DoctorCheck[];
}

/** What doctor needs to know about kernelspecs; supplied by the kernel domain. */
export interface KernelSpecSummary {
  readonly names: readonly string[];
  readonly problems: readonly string[];
}

/** The extra packages the global settings ask for (`python.packages`), or why they could not be read. */
export interface DoctorPackages {
  readonly requirements: readonly string[];
  readonly unreadable?: string;
}

/** The packages doctor lists: those the settings name, then those `albedo setup` recorded in the interpreter's venv that the settings do not name. */
interface ListedPackages extends DoctorPackages {
  readonly added: readonly string[];
}

export interface DoctorOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly settings?: PythonSettings;
  readonly packages?: DoctorPackages;
  readonly kernelSpecs: (env: NodeJS.ProcessEnv) => Promise<KernelSpecSummary>;
  /** Node version to judge; default the running one. */
  readonly nodeVersion?: string;
}

const ok = (name: string, detail: string): DoctorCheck => ({ name, status: "ok", detail, fix: null });
const problem = (name: string, status: "warn" | "fail", detail: string, fix: string): DoctorCheck => ({ name, status, detail, fix });

/** Runs every check in a fixed order; never throws for a failed check (it is reported). */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [checkNode(options.nodeVersion ?? process.versions.node)];
  checks.push(...(await checkPython(options.env, options.settings, options.packages ?? { requirements: [] })));
  checks.push(await checkKernelSpecs(options));
  checks.push(checkStateDir(stateDir(options.env)));
  return { ok: checks.every((check) => check.status !== "fail"), checks };
}

function checkNode(version: string): DoctorCheck {
  if (compareVersions(version, MIN_NODE_VERSION) >= 0) return ok("node", `Node.js ${version}`);
  return problem("node", "fail", `Node.js ${version} is older than ${MIN_NODE_VERSION}`, `install Node.js ${MIN_NODE_VERSION} or newer`);
}

async function checkPython(env: NodeJS.ProcessEnv, settings: PythonSettings | undefined, named: DoctorPackages): Promise<DoctorCheck[]> {
  const candidate = pythonCandidate(env, settings);
  const added = recordedPackages(venvOfInterpreter(candidate.path)).filter((requirement) => !named.requirements.some((one) => packageName(one) === packageName(requirement)));
  const packages: ListedPackages = { ...named, added };
  let status: PythonStatus;
  try {
    status = await probePython(candidate, env, [...packages.requirements, ...added].map(packageName));
  } catch (error) {
    if (!(error instanceof PythonUnavailableError)) throw error;
    const skipped = "not checked: no usable Python interpreter";
    const extras = packages.requirements.length + added.length === 0 ? checkPackages(undefined, packages) : problem("packages", "warn", skipped, error.fix);
    return [problem("python", "fail", error.message, error.fix), problem("ipykernel", "fail", skipped, error.fix), problem("pyzmq", "fail", skipped, error.fix), extras];
  }
  const python = ok("python", `${label(status)} (Python ${status.pythonVersion})`);
  const ipykernel = ipykernelMeetsMinimum(status.ipykernel)
    ? ok("ipykernel", `ipykernel ${status.ipykernel.version ?? "?"}`)
    : problem("ipykernel", "fail", `ipykernel>=${MIN_IPYKERNEL_MAJOR} needed, found ${describeModule(status.ipykernel)}`, fixFor(status));
  const pyzmq = status.pyzmq.importable
    ? ok("pyzmq", `pyzmq ${status.pyzmq.version ?? "?"}`)
    : problem("pyzmq", "fail", `pyzmq ${describeModule(status.pyzmq)}`, fixFor(status));
  return [python, ipykernel, pyzmq, checkPackages(status, packages)];
}

/** Each extra package with its installed version; a missing one is a warning (kernels run without it). */
function checkPackages(status: PythonStatus | undefined, packages: ListedPackages): DoctorCheck {
  if (packages.unreadable !== undefined) return problem("packages", "warn", `python.packages not read: ${packages.unreadable}`, "correct the global settings file");
  const all = [...packages.requirements, ...packages.added];
  if (all.length === 0) return ok("packages", "none named in python.packages (global settings) or added by albedo setup --with");
  const states = judgePackages(all, status?.distributions ?? {});
  const shown = (state: PackageState): string => (state.met ? `${state.name} ${state.version}` : state.version === null ? `${state.requirement} not installed` : `${state.requirement} wanted, ${state.version} installed`);
  const detail = states.map((state, index) => `${shown(state)}${index >= packages.requirements.length ? " (setup --with)" : ""}`).join(", ");
  if (states.every((state) => state.met)) return ok("packages", detail);
  const fix = status?.source === "managed" ? "run `albedo setup` to install them" : `run \`albedo setup\` for the managed environment, or install them into ${status?.path ?? "the interpreter"} with pip`;
  return problem("packages", "warn", detail, fix);
}

async function checkKernelSpecs(options: DoctorOptions): Promise<DoctorCheck> {
  const { names, problems } = await options.kernelSpecs(options.env);
  if (problems.length > 0) {
    return problem("kernelspecs", "warn", `found ${names.length > 0 ? names.join(", ") : "none usable"}; ${problems.length} malformed: ${problems.join("; ")}`, "fix or remove the kernel.json files named above");
  }
  if (names.length === 0) {
    return problem("kernelspecs", "warn", "no Jupyter kernelspecs found (not needed: sessions use the managed interpreter unless a kernelspec is named)", "to run sessions on a named kernelspec, install one, e.g. `python -m ipykernel install --user`");
  }
  return ok("kernelspecs", names.join(", "));
}

/** Judges the state dir without creating it: a group/world-writable dir would let others plant tokens or sockets. */
export function checkStateDir(dir: string): DoctorCheck {
  const stat = statOrUndefined(dir);
  if (stat === undefined) {
    let ancestor = dirname(dir);
    while (statOrUndefined(ancestor) === undefined && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
    if (writableDir(ancestor)) return ok("state-dir", `${dir} does not exist yet; it will be created under ${ancestor}`);
    return problem("state-dir", "fail", `${dir} does not exist and ${ancestor} is not a writable directory`, "set ALBEDO_HOME to a directory you own, or create this one with mode 0700");
  }
  if (!stat.isDirectory()) return problem("state-dir", "fail", `${dir} is not a directory`, "move it aside, or set ALBEDO_HOME to another directory");
  if ((stat.mode & 0o022) !== 0) {
    return problem("state-dir", "fail", `${dir} is group- or world-writable (mode ${(stat.mode & 0o777).toString(8)})`, `chmod 700 ${dir}`);
  }
  if (!writableDir(dir)) return problem("state-dir", "fail", `${dir} is not writable by this user`, `fix its owner or permissions, or set ALBEDO_HOME to a directory you own`);
  return ok("state-dir", `${dir} (mode ${(stat.mode & 0o777).toString(8)})`);
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function writableDir(path: string): boolean {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
