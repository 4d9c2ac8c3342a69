/**
 * The kernel sandbox (K-10): decide whether a kernel runs inside bubblewrap, and build the argv
 * prefix that puts it there with its resource limits. The kernel client calls `wrap` on its final
 * argv just before spawning.
 */
import { createPidsCgroup, type PidsCgroup } from "./cgroup.js";
import { detectSandbox } from "./detect.js";
import { prlimitArgv, resolveLimits, type ResourceLimits } from "./limits.js";
import { bwrapArgs, profileMounts, sandboxEnv, type SandboxProfile } from "./profile.js";

export { DEFAULT_LIMITS, LIMIT_MINIMUMS, MAX_LIMIT_VALUE, DEFAULT_MEMORY_MB, DEFAULT_OPEN_FILES, DEFAULT_PROCESSES, resolveLimits, type ResourceLimits } from "./limits.js";
export { detectSandbox, findExecutable, PROBE_TIMEOUT_MS, warmSandboxProbe, type Detection } from "./detect.js";
export { bwrapArgs, sandboxEnv, type SandboxProfile } from "./profile.js";
export { sandboxedPid, signalSandboxed } from "./pids.js";
export { pythonReadPaths } from "./python.js";

export type SandboxMode = "auto" | "required" | "off";
export const SANDBOX_MODES: readonly SandboxMode[] = ["auto", "required", "off"];
export const DEFAULT_SANDBOX_MODE: SandboxMode = "auto";

/** Rewrites a kernel argv; `spawnEnv` (default process.env) supplies the allow-listed variables. */
export type Wrap = (argv: string[], spawnEnv?: Readonly<Record<string, string | undefined>>) => string[];

export interface BwrapSandbox {
  readonly kind: "bwrap";
  readonly wrap: Wrap;
  /** bwrap does not forward signals (SIGINT to it ends the sandbox): interrupt by message, or signalSandboxed(). */
  readonly interruptMode: "message";
  readonly limits: ResourceLimits;
  /** What bounds the process count: a cgroup (holds for root), RLIMIT_NPROC (non-root only), or nothing. */
  readonly processCap: "cgroup" | "rlimit" | "none";
  /** Texts for the caller to print once: parts of the protection that are missing on this machine. */
  readonly warnings: readonly string[];
  /** Removes what prepareSandbox created (the cgroup), killing anything still in it. */
  dispose(): Promise<void>;
}

export interface NoSandbox {
  readonly kind: "none";
  readonly reason: string;
  /** Set in mode "auto": the text the caller prints once. Absent when the user chose "off". */
  readonly warning?: string;
  /** Returns the argv unchanged. */
  readonly wrap: Wrap;
  dispose(): Promise<void>;
}

export type Sandbox = BwrapSandbox | NoSandbox;

export interface PrepareSandboxOptions {
  readonly mode: SandboxMode;
  readonly profile: SandboxProfile;
  readonly limits?: Partial<ResourceLimits>;
  /** Environment whose PATH is searched for bwrap and prlimit; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Try a cgroup pids cap (default true); it is the only process cap that binds a root user. */
  readonly pidsCgroup?: boolean;
}

/** Thrown by prepareSandbox in mode "required" when no working bubblewrap exists; no kernel may start. */
export class SandboxUnavailableError extends Error {
  override readonly name = "SandboxUnavailableError";
}

const INSTALL_HINT = "Install it with `apt-get install bubblewrap`";

/** A sandbox for one kernel, or none (mode off, or auto without bwrap); throws SandboxUnavailableError (required) or on a bad profile/limits. */
export function prepareSandbox(options: PrepareSandboxOptions): Sandbox {
  const limits = resolveLimits(options.limits);
  if (options.mode === "off") return noSandbox("sandbox is off");
  const found = detectSandbox(options.env ?? process.env);
  if (!found.usable) {
    if (options.mode === "required") {
      throw new SandboxUnavailableError(`sandbox is required but unavailable: ${found.reason}. ${INSTALL_HINT}, or set sandbox to auto or off.`);
    }
    const what = found.missing ? "bubblewrap not found" : found.reason;
    return noSandbox(found.reason, `sandbox: ${what}; kernels run unsandboxed. ${INSTALL_HINT}, or set sandbox to off to silence this.`);
  }
  const toolPaths = found.prlimit ? [found.prlimit] : [];
  profileMounts(options.profile, toolPaths);
  const warnings: string[] = [];
  const limitArgv = found.prlimit ? prlimitArgv(found.prlimit, limits) : [];
  if (!found.prlimit) warnings.push("sandbox: prlimit (util-linux) not found; memory, process and open-file limits are not applied.");
  const cgroup = options.pidsCgroup === false ? "not requested" : createPidsCgroup(limits.processes);
  const processCap = processCapOf(cgroup, found.prlimit !== undefined);
  if (processCap === "none" && found.prlimit) {
    warnings.push(`sandbox: running as root, where the process limit does not hold and no cgroup could be made (${String(cgroup)}); a fork bomb in a kernel is bounded only by the host.`);
  }
  const prefix = typeof cgroup === "string" ? [] : cgroup.joinArgv;
  const wrap: Wrap = (argv, spawnEnv = process.env) => {
    const env = sandboxEnv(options.profile, spawnEnv);
    return [...prefix, found.bwrap, ...bwrapArgs(options.profile, env, toolPaths), "--", ...limitArgv, ...argv];
  };
  const dispose = typeof cgroup === "string" ? () => Promise.resolve() : () => cgroup.dispose();
  return { kind: "bwrap", wrap, interruptMode: "message", limits, processCap, warnings, dispose };
}

function processCapOf(cgroup: PidsCgroup | string, hasPrlimit: boolean): BwrapSandbox["processCap"] {
  if (typeof cgroup !== "string") return "cgroup";
  const root = process.getuid?.() === 0;
  return hasPrlimit && !root ? "rlimit" : "none";
}

function noSandbox(reason: string, warning?: string): NoSandbox {
  const base = { kind: "none" as const, reason, wrap: (argv: string[]) => argv, dispose: () => Promise.resolve() };
  return warning === undefined ? base : { ...base, warning };
}
