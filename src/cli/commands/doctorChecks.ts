/**
 * The checks `albedo doctor` adds to the Python domain's: bubblewrap, the daemon for this state dir, and
 * whether the "albedo" kernelspec runs this install (a kernelspec left by another checkout starts
 * notebooks on that checkout's code).
 */
import { accessSync, constants, realpathSync } from "node:fs";
import { join } from "node:path";
import { findRunningDaemon } from "../../api/index.js";
import { findKernelSpec } from "../../kernel/index.js";
import type { McpSection } from "../../mcp/index.js";
import { withServersOnce } from "./mcpCommands.js";
import { DEFAULT_PACKAGES_MB, detectSandbox, measurePackageLayer, packageLayerDir, readLayerRecord, type SandboxMode } from "../../sandbox/index.js";
import { describeNetwork, type NetworkSetting } from "../../network/index.js";
import type { DoctorCheck } from "../../python/index.js";
import { DEFAULT_KERNELSPEC_NAME } from "./kernelspec.js";
import { LAUNCHER_INSTALL_ENV } from "../../bridge/index.js";
import { installDir, stateDir } from "../../platform/index.js";

/** The daemon named by daemon.json, when it answers; never a failure, since commands start one when they need it. */
export async function checkDaemon(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const state = stateDir(env);
  const daemon = await findRunningDaemon(state);
  if (daemon === undefined) {
    return { name: "daemon", status: "ok", detail: `not running for ${state} (notebooks and settings commands start one when needed)`, fix: null };
  }
  const health = await daemon.send<{ sessions?: number }>("GET", "/health").catch(() => undefined);
  const sessions = health?.body?.sessions;
  const count = typeof sessions === "number" ? `, ${sessions} session${sessions === 1 ? "" : "s"}` : "";
  return { name: "daemon", status: "ok", detail: `running at ${daemon.info.url} (pid ${daemon.info.pid}${count}); \`albedo daemon status\` says more`, fix: null };
}

/** Whether the "albedo" kernelspec exists and points at this install and an interpreter that runs. */
export async function checkAlbedoKernelSpec(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const name = "albedo-kernelspec";
  const install = installDir();
  const found = await findKernelSpec(DEFAULT_KERNELSPEC_NAME, env);
  if (found === undefined) {
    // Only notebooks need it; a console or exec user has nothing to fix.
    return { name, status: "ok", detail: "not installed (for notebooks: `albedo kernelspec install`)", fix: null };
  }
  const points = found.spec.env[LAUNCHER_INSTALL_ENV];
  if (points !== install || found.spec.env.PYTHONPATH !== join(install, "kernel")) {
    return { name, status: "warn", detail: `${found.file} runs the albedo at ${points ?? `(no ${LAUNCHER_INSTALL_ENV})`}, not this one (${install})`, fix: `run \`albedo kernelspec install\` from ${install} to point it here` };
  }
  const python = found.spec.argv[0] ?? "";
  if (!executable(python)) {
    return { name, status: "warn", detail: `${found.file} starts ${python}, which is not an executable file`, fix: "albedo setup && albedo kernelspec install" };
  }
  return { name, status: "ok", detail: `${found.file} runs this install with ${python}`, fix: null };
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a notebook on the albedo kernelspec gets a sandboxed kernel (K-14): its launcher relays
 * to a daemon kernel, so the answer is the bubblewrap check's, for a kernelspec that runs this install.
 */
export function checkNotebookSandbox(kernelspec: DoctorCheck, bubblewrap: DoctorCheck, mode: SandboxMode): DoctorCheck {
  const name = "notebook-sandbox";
  if (kernelspec.status !== "ok") return { name, status: "warn", detail: "the albedo kernelspec does not run this install: what its kernels get is that install's to say", fix: kernelspec.fix };
  if (kernelspec.detail.startsWith("not installed")) return { name, status: "ok", detail: "no albedo kernelspec: notebooks do not start albedo kernels", fix: null };
  if (mode === "off") return { name, status: "ok", detail: "notebook kernels run without a sandbox (the sandbox setting is off)", fix: "`albedo settings set sandbox auto` to sandbox them" };
  if (bubblewrap.status === "ok") return { name, status: "ok", detail: "notebook kernels run in the bubblewrap sandbox, as daemon kernels do: the notebook's directory read-write, skill roots read-only, no network unless the setting allows", fix: null };
  if (mode === "required") return { name, status: "fail", detail: "notebook kernels will run no code: the sandbox setting is required and bubblewrap cannot sandbox here (each cell says so)", fix: bubblewrap.fix };
  return { name, status: "warn", detail: "notebook kernels will run without a sandbox: bubblewrap cannot sandbox here (sandbox: auto)", fix: bubblewrap.fix };
}

/** What `sandbox: off` (the setting) makes of the bubblewrap check: nothing to fix, kernels run unsandboxed by choice. */
const OFF_DETAIL = "not checked: the sandbox setting is off, kernels run without a sandbox (`albedo settings set sandbox auto` turns it on)";

// The sandbox domain's own probe, so doctor reports exactly what a kernel start would find under the effective `sandbox` setting.
export function checkBubblewrap(env: NodeJS.ProcessEnv, mode: SandboxMode): DoctorCheck {
  if (mode === "off") return { name: "bubblewrap", status: "ok", detail: OFF_DETAIL, fix: null };
  const found = detectSandbox(env);
  if (found.usable) return { name: "bubblewrap", status: "ok", detail: `${found.bwrap} can create a sandbox here${found.prlimit ? "" : " (prlimit not found: no resource limits)"}`, fix: null };
  // Under "required" no kernel starts without a working bubblewrap, so its absence is a failure.
  const required = mode === "required";
  const consequence = required ? "no kernel can start (setting sandbox: required)" : "kernels will run without a sandbox (setting sandbox: auto)";
  const orSetting = `or \`albedo settings set sandbox ${required ? "auto" : "off"}\``;
  const fix = found.missing
    ? `apt-get install bubblewrap, ${orSetting}`
    : `allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ an AppArmor profile for bwrap), ${orSetting}`;
  return { name: "bubblewrap", status: required ? "fail" : "warn", detail: `${found.reason}: ${consequence}`, fix };
}

/**
 * One check per MCP server of the global settings: each is started once (all in parallel, each
 * within its startup deadline), reported running with its tool count or failed with why, then stopped.
 */
export async function checkMcpServers(env: NodeJS.ProcessEnv, section: McpSection | undefined, workspace: string, sandbox: SandboxMode): Promise<DoctorCheck[]> {
  if (Object.keys(section?.servers ?? {}).length === 0) return [];
  return withServersOnce(env, { global: section! }, workspace, sandbox, (hub) =>
    hub.servers().map((server): DoctorCheck => {
      const name = `mcp ${server.name}`;
      const why = server.diagnostics.join("; ");
      if (server.status === "running") return { name, status: "ok", detail: `running, ${server.tools} tool${server.tools === 1 ? "" : "s"}${why ? ` (${why})` : ""}`, fix: null };
      if (server.status === "disabled") return { name, status: "ok", detail: why || "turned off in the settings", fix: null };
      return { name, status: "warn", detail: `${server.status}: ${why || "no reason given"}`, fix: `check the entry with \`albedo settings get mcp\`; sessions open without it` };
    }),
  );
}

/**
 * What a sandboxed kernel may reach under the global `network` setting (N-1): off, a policy of N
 * hosts, or open and unsafe; a warning when the kernel would run unsandboxed, where no setting
 * but `false` or `true` means anything (the kernel has the host's network).
 */
export function checkNetwork(setting: NetworkSetting, bubblewrap: DoctorCheck, mode: SandboxMode): DoctorCheck {
  const name = "network";
  const text = describeNetwork(setting);
  if (setting === true) {
    return { name, status: "warn", detail: `${text}: a kernel reaches every host, the machine's internal services and the cloud metadata address included`, fix: "albedo network reset, then albedo network allow HOST for the hosts kernels need" };
  }
  const sandboxed = mode !== "off" && bubblewrap.status === "ok";
  if (!sandboxed) {
    return { name, status: "warn", detail: `${text} in the settings, but kernels run unsandboxed here, with the host's network: the setting is not enforced`, fix: "install bubblewrap (see the bubblewrap check) and keep the sandbox setting auto or required" };
  }
  const how = setting === false ? "; `albedo network allow HOST` lets kernels reach a host" : " through each session's egress proxy; `albedo network show` lists them";
  return { name, status: "ok", detail: `${text}${how}`, fix: null };
}

/** Bytes as doctor and `albedo packages` show them. */
export function sizeText(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** This workspace's package layer (where `%pip install` in a sandboxed cell puts packages): its path, what it holds, and its quota. */
export async function checkPackageLayer(env: NodeJS.ProcessEnv, cwd: string, packagesMB: number | undefined): Promise<DoctorCheck> {
  const name = "package-layer";
  const quota = packagesMB ?? DEFAULT_PACKAGES_MB;
  const layer = packageLayerDir(stateDir(env), realpathSync(cwd));
  const made = await readLayerRecord(layer);
  if (made === undefined) return { name, status: "ok", detail: `no package layer for ${cwd} yet; \`%pip install\` in a sandboxed cell makes ${layer}`, fix: null };
  const { bytes, truncated } = await measurePackageLayer(layer);
  const detail = `${layer} holds ${sizeText(bytes)} of ${quota} MiB (limits.packagesMB), over ${made.base} (Python ${made.version})`;
  if (truncated || bytes > quota * 1024 * 1024) {
    return { name, status: "warn", detail: `${detail}: over its quota, read-only for new sessions`, fix: "albedo packages clear (in this workspace), or raise limits.packagesMB" };
  }
  return { name, status: "ok", detail, fix: null };
}
