import { realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ResolvedKernelLaunch } from "../kernel/index.js";
import { egressEnv, SessionEgress, type NetworkSetting } from "../network/index.js";
import type { Log } from "../platform/index.js";
import { AppError } from "../errors/index.js";
import { projectSettingsTarget } from "../settings/index.js";
import {
  DEFAULT_PACKAGES_MB, detectSandbox, planKey, preparePackageLayer, prepareSandbox, pythonPaths, warmSandboxProbe,
  type ExposureRequest, type InterpreterPaths, type PackageLayer, type Sandbox, type SandboxMode, type SandboxProfile,
} from "../sandbox/index.js";
import { discoveryRoots } from "../skills/index.js";
import type { SessionView } from "./view.js";

/** Warnings already printed by this process: "auto without bwrap" is said once, not per session. */
const said = new Set<string>();
/** An interpreter's install paths never change while the runtime runs; asking costs a Python start. */
const interpreterPaths = new Map<string, Promise<InterpreterPaths>>();
const MIB = 1024 * 1024;

export interface KernelSandboxInputs {
  readonly workspace: string;
  readonly home: string;
  readonly stateDir: string;
  readonly runDir: string;
  /** The session's checkpoint directory (K-15), bound read-write into this kernel's sandbox only. */
  readonly checkpointDir?: string;
  readonly install: string;
  /** A one-run override (CLI `--sandbox`); otherwise the global setting, otherwise "auto". */
  readonly mode?: SandboxMode;
  readonly view: SessionView;
  readonly warn: (message: string) => void;
  /** Where the egress proxy reads secrets' variables (the runtime's environment). */
  readonly env?: NodeJS.ProcessEnv;
  /** The session's own network setting, in place of the global one (never read from the project file). */
  readonly network?: NetworkSetting;
  readonly log?: Log;
}

/**
 * The sandbox for a session's kernel (K-10) and the launch adjusted to it. Sandbox, limit and
 * network choices come from the GLOBAL settings only: the project file lives in the workspace,
 * which the kernel can write, so it must not be able to loosen its own sandbox. What the sandbox
 * exposes is pinned here, once: the kernel's restarts reuse it. Throws SandboxUnavailableError in
 * mode "required" without a working bubblewrap.
 */
export async function prepareKernelSandbox(
  inputs: KernelSandboxInputs,
  launch: ResolvedKernelLaunch,
): Promise<{ sandbox: Sandbox; launch: ResolvedKernelLaunch; egress?: SessionEgress }> {
  const settings = inputs.view.selection.scopes.global ?? {};
  // The host's whole network is the person's to give, in the global settings; a session may only narrow it.
  if (inputs.network === true && settings.network !== true) {
    throw new AppError("forbidden", "network: true (the host's whole network, unfiltered) may be asked for only while the global network setting is true; give a policy instead");
  }
  const network: NetworkSetting = inputs.network ?? settings.network ?? false;
  const ignored = projectNetworkNote(inputs);
  if (ignored !== undefined) inputs.warn(ignored);
  const mode = inputs.mode ?? settings.sandbox ?? "auto";
  const python = launch.argv[0]!;
  // Both answers are cached per process; asking them asynchronously keeps a daemon's other sessions responsive.
  const [paths] = await Promise.all([mode === "off" ? undefined : pathsOf(python), mode === "off" ? undefined : warmSandboxProbe()]);
  const layer = paths === undefined ? undefined : await packageLayerFor(inputs, settings.limits?.packagesMB, paths);
  const profile: SandboxProfile = {
    workspace: inputs.workspace,
    runDir: inputs.runDir,
    ...(inputs.checkpointDir !== undefined ? { checkpointDir: inputs.checkpointDir } : {}),
    stateDir: inputs.stateDir,
    home: inputs.home,
    readOnly: exposureRequests(inputs, inputs.view, paths?.readPaths ?? []),
    ...(layer !== undefined ? { packageLayer: { dir: layer.dir, kind: layer.over ? "ro" : "rw", quotaBytes: layer.quotaBytes } } : {}),
    // The host's network only for `true`; otherwise the private namespace, with the way out through the session's proxy.
    network: network === true,
    ...(network === true || mode === "off" ? {} : { env: egressEnv(realpathSync(inputs.runDir), network) }),
  };
  const sandbox = prepareSandbox({ mode, limits: settings.limits ?? {}, profile });
  const notes = sandbox.kind === "bwrap" ? sandbox.notes.map((note) => `sandbox: ${note.path}: ${note.message}`) : [];
  for (const warning of [...notes, ...(sandbox.kind === "bwrap" ? sandbox.warnings : sandbox.warning ? [sandbox.warning] : [])]) {
    if (said.has(warning)) continue;
    said.add(warning);
    inputs.warn(warning);
  }
  if (sandbox.kind !== "bwrap") {
    if (network !== false) warnOnce(inputs, `network: the kernel runs unsandboxed, so it has the host's network and the network setting is not enforced`);
    return { sandbox, launch };
  }
  let egress: SessionEgress | undefined;
  if (network !== true) {
    try {
      egress = await SessionEgress.start({
        runDir: realpathSync(inputs.runDir), caDir: inputs.stateDir, setting: network, own: inputs.network !== undefined, ...(inputs.env ? { env: inputs.env } : {}), ...(inputs.log ? { log: inputs.log } : {}),
      });
    } catch (error) {
      await sandbox.dispose();
      throw error;
    }
  }
  // The kernel runs from its workspace's layer (inside the sandbox only: the host never runs it), so pip installs there.
  const argv = layer !== undefined ? [layer.python, ...launch.argv.slice(1)] : launch.argv;
  return { sandbox, launch: { ...launch, argv, interruptMode: sandbox.interruptMode }, ...(egress ? { egress } : {}) };
}

/**
 * The workspace's package layer (N-5) for a kernel that will run sandboxed, made or measured now;
 * undefined when the kernel will not be sandboxed (it then has the host's own rights, and pip
 * installs where it would on the host). An interpreter inside the workspace gets one too: the
 * sandbox shows it read-only, since the host runs it (to ask for its paths) and a kernel must not
 * be able to change what the host runs. Over its quota, it is said once and bound read-only.
 */
async function packageLayerFor(inputs: KernelSandboxInputs, packagesMB: number | undefined, paths: InterpreterPaths): Promise<(PackageLayer & { quotaBytes: number }) | undefined> {
  if (!detectSandbox().usable) return undefined;
  const workspace = realpathSync(inputs.workspace);
  const quotaBytes = (packagesMB ?? DEFAULT_PACKAGES_MB) * MIB;
  const layer = await preparePackageLayer(inputs.stateDir, workspace, paths.facts, quotaBytes);
  if (layer.cleared !== undefined) inputs.warn(`packages: the package layer of ${workspace} was cleared: ${layer.cleared}`);
  if (layer.over) {
    inputs.warn(
      `packages: the package layer ${layer.dir} holds ${megabytes(layer.bytes)}, over its quota of ${megabytes(quotaBytes)} (limits.packagesMB); ` +
        "it is read-only in this session: `albedo packages clear` empties it, or raise limits.packagesMB",
    );
  }
  return { ...layer, quotaBytes };
}

function megabytes(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

function warnOnce(inputs: KernelSandboxInputs, warning: string): void {
  if (said.has(warning)) return;
  said.add(warning);
  inputs.warn(warning);
}

/**
 * The diagnostic of a project file that sets `network`: it changes nothing (the workspace is the
 * kernel's to write, so a cloned repository cannot open the network), and the session says so,
 * naming the file. Undefined when the project file leaves it alone.
 */
export function projectNetworkNote(inputs: { workspace: string; stateDir: string; view: SessionView }): string | undefined {
  const project = inputs.view.selection.scopes.project;
  if (project?.network === undefined) return undefined;
  const file = projectSettingsTarget(inputs.workspace, inputs.stateDir).file;
  return `network: ${file} sets network, which is ignored: only the global settings and the session may set it (a project file sits in the workspace, which the kernel can write)`;
}

/**
 * What a session asks its sandbox to show read-only: the interpreter, the kernel package, the five
 * skill roots and every discovered skill's directory, each tagged with who laid it out. The sandbox
 * plan decides which of them it really exposes.
 */
function exposureRequests(where: { workspace: string; home: string; install: string }, view: SessionView, interpreterPaths: readonly string[]): ExposureRequest[] {
  const roots = discoveryRoots(where);
  const rootOf = (dir: string) => roots.find((root) => dirname(dir) === root.path);
  return [
    ...interpreterPaths.map((path) => ({ path, kind: "ro" as const, what: "Python install" })),
    { path: join(where.install, "kernel"), kind: "ro", what: "albedo kernel package" },
    ...roots.map((root) => ({ path: root.path, kind: "ro" as const, what: `${root.scope} skill root`, ...(root.scope === "user" ? { userRoot: root.path } : {}) })),
    ...view.discovered.skills.map((skill) => {
      const root = rootOf(skill.dir);
      return { path: skill.dir, kind: "ro" as const, what: `skill ${skill.name}`, atRealPathOnly: true, ...(root?.scope === "user" ? { userRoot: root.path } : {}) };
    }),
  ];
}

/**
 * What a kernel's sandbox and launch are built from, as one string: the settings files' revisions
 * (sandbox mode, limits, network and interpreter come from there) and what a sandbox for this
 * workspace would pin now (each skill root and linked skill directory, by device and inode). A
 * kernel booted ahead of need (K-11) is reused only while this is unchanged.
 */
export function sandboxInputsKey(inputs: { workspace: string; home: string; install: string; stateDir: string; runDir: string }, view: SessionView, sandboxed: boolean): string {
  if (!sandboxed) return JSON.stringify([view.selection.settingsRevision]);
  // The interpreter's paths follow from the settings, whose revision is in the key already.
  return JSON.stringify([view.selection.settingsRevision, planKey(inputs, exposureRequests(inputs, view, []))]);
}

function pathsOf(python: string): Promise<InterpreterPaths> {
  let paths = interpreterPaths.get(python);
  if (paths === undefined) {
    paths = pythonPaths(python).then((found) => ({ ...found, readPaths: [...found.readPaths, dirname(python)] }));
    // A failed query is not remembered: the next session asks again.
    paths.catch(() => interpreterPaths.delete(python));
    interpreterPaths.set(python, paths);
  }
  return paths;
}
