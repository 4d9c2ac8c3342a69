import { existsSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { managedVenvDir, probePython, PythonUnavailableError, venvPython, type PythonStatus } from "./interpreter.js";
import { judgePackages, packageName, type PackageState } from "./packages.js";
import { classifyPipFailure, type PipFailureKind } from "./pipFailure.js";
import { isExecutable, runProcess } from "./process.js";
import { recordPackages } from "./recordedPackages.js";
import { readRequirements, requirementsFile, satisfies, type Requirement } from "./requirements.js";
import { findExecutable, installDir } from "../platform/index.js";

/** Deadline for `python -m venv` (includes ensurepip), in milliseconds. */
export const VENV_CREATE_TIMEOUT_MS = 180_000;
/** Deadline for one `pip install` (the kernel requirements, or the extra packages), in milliseconds. */
export const PIP_INSTALL_TIMEOUT_MS = 900_000;
/** Interpreter used to create the venv when none is given. */
export const DEFAULT_BASE_PYTHON = "python3";

export type SetupPhase = "check" | "venv" | "pip" | "packages" | "verify";
export type SetupFailureKind = PipFailureKind | "python_not_found" | "not_a_venv" | "venv_broken" | "venv_failed" | "verify_failed";

export interface PhaseEvent {
  readonly phase: SetupPhase;
  readonly state: "start" | "done" | "failed";
  readonly description: string;
  readonly elapsedMs?: number;
}

export interface SetupOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Venv directory; default the managed one, <install>/.venv. */
  readonly venvDir?: string;
  /** Interpreter that creates the venv; default DEFAULT_BASE_PYTHON on PATH. */
  readonly basePython?: string;
  /** Requirements file; default <install>/kernel/requirements.txt. */
  readonly requirements?: string;
  /** Extra packages to install beside the requirements, each checked by packageProblem. */
  readonly packages?: readonly string[];
  readonly onPhase?: (event: PhaseEvent) => void;
  /** Receives pip's and venv's own output as it arrives. */
  readonly onOutput?: (chunk: Buffer) => void;
}

export interface SetupFailure {
  readonly kind: SetupFailureKind;
  readonly message: string;
  readonly fix: string;
}

export interface SetupResult {
  readonly ok: boolean;
  /** "already": requirements were satisfied and nothing ran; "installed": venv and/or pip ran. */
  readonly action: "already" | "installed" | "failed";
  readonly venv: string;
  readonly python: string;
  readonly requirements: string;
  readonly phases: readonly { readonly phase: SetupPhase; readonly elapsedMs: number; readonly ok: boolean }[];
  readonly ipykernel?: string;
  readonly pyzmq?: string;
  /** The extra packages asked for, as the venv has them at the end (empty when none were asked for). */
  readonly packages: readonly PackageState[];
  readonly elapsedMs: number;
  readonly error?: SetupFailure;
}

class Failed extends Error {
  constructor(readonly failure: SetupFailure) {
    super(failure.message);
  }
}

/** Creates (or confirms) a venv that satisfies the kernel requirements and has the extra packages; failures are returned, never thrown. */
export async function setupPython(options: SetupOptions): Promise<SetupResult> {
  const started = Date.now();
  const venv = resolve(options.venvDir ?? managedVenvDir());
  const python = venvPython(venv);
  const reqFile = options.requirements ?? requirementsFile(installDir());
  const packages = options.packages ?? [];
  const phases: PhaseRecord[] = [];
  const phase = phaseRunner(phases, options.onPhase);
  const finish = (action: SetupResult["action"], status?: PythonStatus, error?: SetupFailure): SetupResult => ({
    ok: error === undefined,
    action,
    venv,
    python,
    requirements: reqFile,
    phases,
    ...(status?.ipykernel.version ? { ipykernel: status.ipykernel.version } : {}),
    ...(status?.pyzmq.version ? { pyzmq: status.pyzmq.version } : {}),
    packages: judgePackages(packages, status?.distributions ?? {}),
    elapsedMs: Date.now() - started,
    ...(error ? { error } : {}),
  });
  try {
    const wanted: Wanted = { requirements: readRequirements(reqFile), packages };
    const existing = await phase("check", `checking ${venv}`, () => checkExisting(venv, wanted, options.env));
    if (existing !== undefined && wantedMet(existing, wanted)) {
      recordPackages(venv, packages);
      return finish("already", existing);
    }
    if (existing === undefined) await phase("venv", `creating a venv with ${options.basePython ?? DEFAULT_BASE_PYTHON}`, () => createVenv(venv, options));
    if (existing === undefined || !requirementsMet(existing, wanted.requirements)) {
      await phase("pip", `installing ${describe(wanted.requirements)} with pip`, () => pipInstall(python, ["-r", reqFile], describe(wanted.requirements), options));
    }
    const missing = existing === undefined ? packages : missingPackages(existing, packages);
    if (missing.length > 0) await phase("packages", `installing ${missing.join(", ")} with pip`, () => pipInstall(python, missing, missing.join(", "), options));
    const status = await phase("verify", "verifying the kernel requirements and packages", () => verify(venv, wanted, options.env));
    recordPackages(venv, packages);
    return finish("installed", status);
  } catch (error) {
    if (error instanceof Failed) return finish("failed", undefined, error.failure);
    throw error;
  }
}

/** What the venv must hold: the kernel's requirements and the extra packages. */
interface Wanted {
  readonly requirements: readonly Requirement[];
  readonly packages: readonly string[];
}

function wantedMet(status: PythonStatus, wanted: Wanted): boolean {
  return requirementsMet(status, wanted.requirements) && missingPackages(status, wanted.packages).length === 0;
}

function missingPackages(status: PythonStatus, packages: readonly string[]): string[] {
  return judgePackages(packages, status.distributions).filter((state) => !state.met).map((state) => state.requirement);
}

type PhaseRecord = { phase: SetupPhase; elapsedMs: number; ok: boolean };

/** Times each phase, records it, and tells `onPhase` when it starts and ends. */
function phaseRunner(phases: PhaseRecord[], onPhase?: (event: PhaseEvent) => void) {
  return async <T>(name: SetupPhase, description: string, work: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const end = (ok: boolean): void => {
      phases.push({ phase: name, elapsedMs: Date.now() - t0, ok });
      onPhase?.({ phase: name, state: ok ? "done" : "failed", description, elapsedMs: Date.now() - t0 });
    };
    onPhase?.({ phase: name, state: "start", description });
    try {
      const value = await work();
      end(true);
      return value;
    } catch (error) {
      end(false);
      throw error;
    }
  };
}

/** The probe of an existing venv's interpreter, or undefined when the venv has no interpreter yet. */
async function checkExisting(venv: string, wanted: Wanted, env: NodeJS.ProcessEnv): Promise<PythonStatus | undefined> {
  const python = venvPython(venv);
  if (!existsSync(python)) {
    if (existsSync(venv) && readdirSync(venv).length > 0 && !existsSync(resolve(venv, "pyvenv.cfg"))) {
      throw new Failed({ kind: "not_a_venv", message: `${venv} exists, is not empty and is not a Python venv`, fix: "choose another directory with --venv DIR, or empty this one" });
    }
    return undefined;
  }
  try {
    return await probePython({ path: python, source: "managed" }, env, [...wanted.requirements.map((r) => r.name), ...wanted.packages.map(packageName)]);
  } catch (error) {
    if (!(error instanceof PythonUnavailableError)) throw error;
    throw new Failed({ kind: "venv_broken", message: `the venv at ${venv} is broken: ${error.message}`, fix: `remove ${venv} and run \`albedo setup\` again` });
  }
}

/** True when the probe shows a kernel-ready interpreter whose distributions meet every requirement. */
export function requirementsMet(status: PythonStatus, requirements: readonly Requirement[]): boolean {
  return status.kernelReady && requirements.every((r) => satisfies(r, status.distributions[r.name] ?? undefined));
}

async function createVenv(venv: string, options: SetupOptions): Promise<void> {
  const wanted = options.basePython ?? DEFAULT_BASE_PYTHON;
  const base = wanted.includes("/") ? (isExecutable(wanted) ? wanted : undefined) : findExecutable(wanted, options.env.PATH);
  if (base === undefined) {
    throw new Failed({ kind: "python_not_found", message: `no Python interpreter "${wanted}" was found${wanted.includes("/") ? "" : " on PATH"}`, fix: "install Python 3.9 or newer, or pass --python PATH" });
  }
  const result = await runProcess(base, ["-m", "venv", venv], { env: options.env, timeoutMs: VENV_CREATE_TIMEOUT_MS, ...(options.onOutput ? { onOutput: options.onOutput } : {}) });
  if (result.code === 0) return;
  const why = result.timedOut ? `did not finish within VENV_CREATE_TIMEOUT_MS=${VENV_CREATE_TIMEOUT_MS} ms` : lastLines(`${result.stdout}\n${result.stderr}`) || (result.spawnError ?? `exit code ${String(result.code)}`);
  throw new Failed({
    kind: "venv_failed",
    message: `\`${base} -m venv ${venv}\` failed: ${why}`,
    fix: "install the venv module (Debian/Ubuntu: apt-get install python3-venv), or pass --python PATH to another interpreter",
  });
}

/** `pip install` of `args` (`-r FILE`, or requirements checked by packageProblem, so none reads as an option); `what` names them in a failure. */
async function pipInstall(python: string, args: readonly string[], what: string, options: SetupOptions): Promise<void> {
  const result = await runProcess(python, ["-m", "pip", "install", ...args], { env: options.env, timeoutMs: PIP_INSTALL_TIMEOUT_MS, ...(options.onOutput ? { onOutput: options.onOutput } : {}) });
  if (result.code === 0 && !result.timedOut) return;
  throw new Failed(classifyPipFailure(result, what, PIP_INSTALL_TIMEOUT_MS));
}

async function verify(venv: string, wanted: Wanted, env: NodeJS.ProcessEnv): Promise<PythonStatus> {
  const status = await checkExisting(venv, wanted, env);
  if (status !== undefined && wantedMet(status, wanted)) return status;
  const missing = status === undefined ? [] : missingPackages(status, wanted.packages);
  const seen = status ? `ipykernel ${status.ipykernel.version ?? "missing"}, pyzmq ${status.pyzmq.version ?? "missing"}${missing.length > 0 ? `; not installed: ${missing.join(", ")}` : ""}` : "no interpreter";
  const asked = [describe(wanted.requirements), ...wanted.packages].join(", ");
  throw new Failed({ kind: "verify_failed", message: `pip finished but the venv still does not meet ${asked} (${seen})`, fix: `run \`albedo setup --verbose\` to see pip's output, or remove ${venv} and try again` });
}

function describe(requirements: readonly Requirement[]): string {
  return requirements.map((r) => r.text).join(", ") || "the kernel requirements";
}

function lastLines(text: string): string {
  return text.trim().split("\n").filter((line) => line.trim().length > 0).slice(-3).join(" | ");
}
