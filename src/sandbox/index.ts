/**
 * The kernel sandbox (K-10): decide whether a kernel runs inside bubblewrap, pin once what it may
 * see, and build the launch that puts it there with its resource limits. The kernel client calls
 * `wrap` on every launch of the session's kernel, the first and each restart, and gets the same
 * pinned view each time.
 */
import { createPidsCgroup, type PidsCgroup } from "./cgroup.js";
import { detectSandbox, type Detection } from "./detect.js";
import type { KernelWrap } from "../kernel/index.js";
import { prlimitArgv, resolveLimits, withinOwnLimits, type ResourceLimits } from "./limits.js";
import { within } from "../platform/index.js";
import { SandboxPlan, type PlanNote } from "./plan.js";
import { bwrapLaunch, checkProfile, sandboxedKernelArgv, sandboxEnv, type SandboxProfile } from "./profile.js";

export { LIMIT_MINIMUMS, MAX_LIMIT_VALUE, resolveLimits, type ResourceLimits } from "./limits.js";
export { detectSandbox, warmSandboxProbe } from "./detect.js";
export { sandboxEnv, type SandboxProfile } from "./profile.js";
export { CHECKPOINTS_DIR, planKey, type ExposureRequest } from "./plan.js";
export { sandboxedPid, signalSandboxed } from "./pids.js";
export { pythonPaths, pythonReadPaths, type InterpreterPaths } from "./python.js";
export { clearPackageLayer, measurePackageLayer, packageLayerDir, preparePackageLayer, readLayerRecord, type PackageLayer } from "./packageLayer.js";
export { DEFAULT_PACKAGES_MB, MIN_PACKAGES_MB } from "./limits.js";
export { KernelWrites } from "./kernelWrites.js";
export { sandboxServer, ServerSandboxError, type SandboxedProcess, type ServerProcess, type ServerSandboxPlaces } from "./server.js";

export type SandboxMode = "auto" | "required" | "off";
export const SANDBOX_MODES: readonly SandboxMode[] = ["auto", "required", "off"];

/** Rewrites a kernel launch (see KernelWrap): the argv goes inside bwrap, pinned directories and the connection file come along. */
export type Wrap = KernelWrap;

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
  /** Requested paths the plan refused to expose, and why (the runtime may still serve skills there). */
  readonly notes: readonly PlanNote[];
  /** What the sandbox exposes, as one string; equal keys mean an equal sandbox. */
  readonly key: string;
  /**
   * Whether the runtime may serve the file at `realPath` to this sandbox's kernel (skills.read and
   * friends run outside the sandbox): yes under a path the sandbox exposes, or outside every
   * place it hides (the state dir, the home, the host's /tmp, /run, /proc, /sys).
   */
  guard(realPath: string): boolean;
  /** Closes the pinned descriptors and removes the cgroup, killing anything still in it. Idempotent. */
  dispose(): Promise<void>;
}

interface NoSandbox {
  readonly kind: "none";
  readonly reason: string;
  /** Set in mode "auto": the text the caller prints once. Absent when the user chose "off". */
  readonly warning?: string;
  /** No wrapper: the kernel starts as it is. */
  readonly wrap: undefined;
  dispose(): Promise<void>;
}

export type Sandbox = BwrapSandbox | NoSandbox;

interface PrepareSandboxOptions {
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
      throw new SandboxUnavailableError(`sandbox is required but unavailable: ${found.reason}. ${INSTALL_HINT}, or run \`albedo settings set sandbox auto\` (or off).`);
    }
    const what = found.missing ? "bubblewrap not found" : found.reason;
    return noSandbox(found.reason, `sandbox: ${what}; kernels run unsandboxed. ${INSTALL_HINT}, or run \`albedo settings set sandbox off\` to silence this.`);
  }
  return bwrapSandbox(options, found, limits);
}

/** Pins the plan, makes the cgroup and builds the wrapper of a usable bubblewrap. */
function bwrapSandbox(options: PrepareSandboxOptions, found: Extract<Detection, { usable: true }>, asked: ResourceLimits): BwrapSandbox {
  checkProfile(options.profile);
  const { limits, warnings } = withinOwnLimits(asked);
  const limitArgv = found.prlimit ? prlimitArgv(found.prlimit, limits) : [];
  if (!found.prlimit) warnings.push("sandbox: prlimit (util-linux) not found; memory, process and open-file limits are not applied.");
  const tools = found.prlimit ? [{ path: found.prlimit, kind: "ro" as const, what: "prlimit" }] : [];
  const plan = SandboxPlan.make(options.profile, [...options.profile.readOnly, ...tools]);
  let cgroup: PidsCgroup | string;
  try {
    cgroup = options.pidsCgroup === false ? "not requested" : createPidsCgroup(limits.processes);
  } catch (error) {
    plan.close();
    throw error;
  }
  const processCap = processCapOf(cgroup, found.prlimit !== undefined);
  if (processCap === "none" && found.prlimit) {
    warnings.push(`sandbox: running as root, where the process limit does not hold and no cgroup could be made (${String(cgroup)}); a fork bomb in a kernel is bounded only by the host.`);
  }
  const prefix = typeof cgroup === "string" ? [] : cgroup.joinArgv;
  // Every launch (the first and each restart) binds the same pinned descriptors: nothing is re-resolved.
  const wrap: Wrap = ({ argv, env: spawnEnv, connection, cwd }) => {
    const env = sandboxEnv(options.profile, spawnEnv);
    const launch = bwrapLaunch(options.profile, plan, { shmMB: limits.shmMB, connection: true, ...(cwd !== undefined ? { chdir: cwd } : {}) });
    return { argv: [...prefix, found.bwrap, ...launch.args, "--", ...limitArgv, ...sandboxedKernelArgv(argv)], fds: launch.fds, feed: connection, env };
  };
  const guard = pathGuard(plan, options.profile);
  const dispose = async () => {
    plan.close();
    if (typeof cgroup !== "string") await cgroup.dispose();
  };
  return { kind: "bwrap", wrap, interruptMode: "message", limits, processCap, warnings, notes: plan.notes, key: plan.key(), guard, dispose };
}

/** Places the sandbox hides from the kernel unless an exposed path covers them. */
const HIDDEN_SYSTEM_PATHS = ["/tmp", "/run", "/proc", "/sys"];

/**
 * Mirrors the sandbox's view: an exposed path shows what lies under it, except that the state dir
 * stays hidden even under an exposure that contains it (a workspace holding the state dir); only
 * exposures inside the state dir (the run dir, a user skill root there) show parts of it.
 */
function pathGuard(plan: SandboxPlan, profile: SandboxProfile): (realPath: string) => boolean {
  const exposed = plan.exposedPaths();
  const stateDirs = [...new Set([profile.stateDir, plan.places.stateDir])];
  const hidden = [...new Set([profile.home, plan.places.home, ...HIDDEN_SYSTEM_PATHS])];
  return (real) => {
    const under = exposed.filter((base) => within(real, base));
    if (stateDirs.some((state) => within(real, state))) return under.some((base) => stateDirs.some((state) => base !== state && within(base, state)));
    return under.length > 0 || !hidden.some((base) => within(real, base));
  };
}

function processCapOf(cgroup: PidsCgroup | string, hasPrlimit: boolean): BwrapSandbox["processCap"] {
  if (typeof cgroup !== "string") return "cgroup";
  const root = process.getuid?.() === 0;
  return hasPrlimit && !root ? "rlimit" : "none";
}

function noSandbox(reason: string, warning?: string): NoSandbox {
  const base = { kind: "none" as const, reason, wrap: undefined, dispose: () => Promise.resolve() };
  return warning === undefined ? base : { ...base, warning };
}
