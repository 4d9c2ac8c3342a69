import { dirname, join } from "node:path";
import type { ResolvedKernelLaunch } from "../kernel/index.js";
import { prepareSandbox, pythonReadPaths, type Sandbox, type SandboxMode } from "../sandbox/index.js";
import { globalSettingsTarget, readSettings } from "../settings/index.js";
import { discoveryRoots } from "../skills/index.js";
import type { SessionView } from "./view.js";

/** Warnings already printed by this process: "auto without bwrap" is said once, not per session. */
const said = new Set<string>();
/** An interpreter's install paths never change while the runtime runs; asking costs a Python start. */
const pythonPaths = new Map<string, readonly string[]>();

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
export async function prepareKernelSandbox(inputs: KernelSandboxInputs, launch: ResolvedKernelLaunch): Promise<{ sandbox: Sandbox; launch: ResolvedKernelLaunch }> {
  const { settings } = await readSettings(globalSettingsTarget(inputs.stateDir));
  const mode = inputs.mode ?? settings.sandbox ?? "auto";
  const python = launch.argv[0]!;
  const sandbox = prepareSandbox({
    mode,
    limits: settings.limits ?? {},
    profile: {
      workspace: inputs.workspace,
      runDir: inputs.runDir,
      stateDir: inputs.stateDir,
      home: inputs.home,
      skillRoots: discoveryRoots({ workspace: inputs.workspace, home: inputs.home, install: inputs.install }).map((root) => root.path),
      extraReadOnly: [...new Set(inputs.view.discovered.skills.map((skill) => skill.resolvedDir))],
      pythonPaths: [...(mode === "off" ? [] : readPathsOf(python)), join(inputs.install, "kernel")],
      network: settings.network ?? false,
    },
  });
  for (const warning of sandbox.kind === "bwrap" ? sandbox.warnings : sandbox.warning ? [sandbox.warning] : []) {
    if (said.has(warning)) continue;
    said.add(warning);
    inputs.warn(warning);
  }
  return { sandbox, launch: sandbox.kind === "bwrap" ? { ...launch, interruptMode: sandbox.interruptMode } : launch };
}

function readPathsOf(python: string): readonly string[] {
  let paths = pythonPaths.get(python);
  if (paths === undefined) {
    paths = [...pythonReadPaths(python), dirname(python)];
    pythonPaths.set(python, paths);
  }
  return paths;
}
