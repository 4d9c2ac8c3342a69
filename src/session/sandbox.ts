import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ResolvedKernelLaunch } from "../kernel/index.js";
import { prepareSandbox, pythonReadPaths, warmSandboxProbe, type Sandbox, type SandboxMode, type SandboxProfile } from "../sandbox/index.js";
import { discoveryRoots, type PathGuard } from "../skills/index.js";
import type { SessionView } from "./view.js";

/** Warnings already printed by this process: "auto without bwrap" is said once, not per session. */
const said = new Set<string>();
/** An interpreter's install paths never change while the runtime runs; asking costs a Python start. */
const pythonPaths = new Map<string, Promise<readonly string[]>>();

export interface KernelSandboxInputs {
  readonly workspace: string;
  readonly home: string;
  readonly stateDir: string;
  readonly runDir: string;
  readonly install: string;
  /** A one-run override (CLI `--sandbox`); otherwise the global setting, otherwise "auto". */
  readonly mode?: SandboxMode;
  readonly view: SessionView;
  readonly warn: (message: string) => void;
}

/**
 * The sandbox for a session's kernel (K-10) and the launch adjusted to it. Sandbox, limit and
 * network choices come from the GLOBAL settings only: the project file lives in the workspace,
 * which the kernel can write, so it must not be able to loosen its own sandbox.
 * Throws SandboxUnavailableError in mode "required" without a working bubblewrap.
 */
export async function prepareKernelSandbox(
  inputs: KernelSandboxInputs,
  launch: ResolvedKernelLaunch,
): Promise<{ sandbox: Sandbox; launch: ResolvedKernelLaunch; guard: PathGuard | undefined }> {
  const settings = inputs.view.selection.scopes.global ?? {};
  const mode = inputs.mode ?? settings.sandbox ?? "auto";
  const python = launch.argv[0]!;
  // Both answers are cached per process; asking them asynchronously keeps a daemon's other sessions responsive.
  const [interpreterPaths] = await Promise.all([mode === "off" ? [] : readPathsOf(python), mode === "off" ? undefined : warmSandboxProbe()]);
  const profile: SandboxProfile = {
    workspace: inputs.workspace,
    runDir: inputs.runDir,
    stateDir: inputs.stateDir,
    home: inputs.home,
    skillRoots: discoveryRoots({ workspace: inputs.workspace, home: inputs.home, install: inputs.install }).map((root) => root.path),
    extraReadOnly: [...new Set(inputs.view.discovered.skills.map((skill) => skill.resolvedDir))],
    pythonPaths: [...interpreterPaths, join(inputs.install, "kernel")],
    network: settings.network ?? false,
  };
  const sandbox = prepareSandbox({ mode, limits: settings.limits ?? {}, profile });
  for (const warning of sandbox.kind === "bwrap" ? sandbox.warnings : sandbox.warning ? [sandbox.warning] : []) {
    if (said.has(warning)) continue;
    said.add(warning);
    inputs.warn(warning);
  }
  if (sandbox.kind !== "bwrap") return { sandbox, launch, guard: undefined };
  return { sandbox, launch: { ...launch, interruptMode: sandbox.interruptMode }, guard: sandboxGuard(profile) };
}

/**
 * What a kernel's sandbox and launch are built from, as one string: the settings files' revisions
 * (sandbox mode, limits, network and interpreter come from there), the skill roots that exist (each
 * is bound read-only), and the real directories of skills that live outside them through a link
 * (each bound too). A kernel booted ahead of need (K-11) is reused only while this is unchanged.
 */
export function sandboxInputsKey(inputs: { workspace: string; home: string; install: string }, view: SessionView): string {
  const roots = discoveryRoots(inputs).flatMap((root) => {
    try {
      return [realpathSync(root.path)];
    } catch {
      return [];
    }
  });
  const outside = view.discovered.skills.map((skill) => skill.resolvedDir).filter((dir) => !roots.some((root) => within(dir, root)));
  return JSON.stringify([view.selection.settingsRevision, roots, [...new Set(outside)].sort()]);
}

/** Places the sandbox hides from the kernel unless an exposed path covers them. */
const HIDDEN_SYSTEM_PATHS = ["/tmp", "/run", "/proc", "/sys"];

/**
 * What the runtime may serve a sandboxed kernel through skills.read and friends: anything under a
 * path the sandbox exposes, or anything outside what it hides (the state dir, the home, the host's
 * /tmp, /run, /proc). Without it a link planted in the workspace would read, through the runtime, a
 * file the kernel's own sandbox hides (daemon.token, ~/.ssh).
 */
export function sandboxGuard(profile: SandboxProfile): PathGuard {
  const exposed = withRealPaths([profile.workspace, profile.runDir, ...profile.skillRoots, ...(profile.extraReadOnly ?? []), ...profile.pythonPaths]);
  const hidden = withRealPaths([profile.stateDir, profile.home, ...HIDDEN_SYSTEM_PATHS]);
  return (real) => exposed.some((base) => within(real, base)) || !hidden.some((base) => within(real, base));
}

function within(path: string, base: string): boolean {
  return path === base || path.startsWith(base.endsWith("/") ? base : `${base}/`);
}

/** Each path as given and, when it exists, as resolved through its links. */
function withRealPaths(paths: readonly string[]): string[] {
  return [...new Set(paths.flatMap((path) => {
    try {
      return [path, realpathSync(path)];
    } catch {
      return [path];
    }
  }))];
}

function readPathsOf(python: string): Promise<readonly string[]> {
  let paths = pythonPaths.get(python);
  if (paths === undefined) {
    paths = pythonReadPaths(python).then((found) => [...found, dirname(python)]);
    // A failed query is not remembered: the next session asks again.
    paths.catch(() => pythonPaths.delete(python));
    pythonPaths.set(python, paths);
  }
  return paths;
}
