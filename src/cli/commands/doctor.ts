import { JSON_OPTION, REMOTE_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { remoteDoctor, resolveRemoteKernel } from "../../kernel/index.js";
import { globalSettingsTarget, readSettings, SettingsFileError } from "../../settings/index.js";
import { remoteOf } from "../plumbing/session.js";
import type { ParsedArgs } from "../plumbing/args.js";
import { checkAlbedoKernelSpec, checkBubblewrap, checkDaemon, checkMcpServers, checkNetwork, checkNotebookSandbox, checkPackageLayer } from "./doctorChecks.js";
import { styleFor, type Style } from "../terminal/style.js";
import { listKernelSpecs } from "../../kernel/index.js";
import { runDoctor, type CheckStatus, type DoctorPackages, type DoctorReport, type KernelSpecSummary } from "../../python/index.js";
import { visibleControls, wrap, TERMINAL_COLUMNS } from "../../text/index.js";
import { stateDir } from "../../platform/index.js";
import type { McpSection } from "../../mcp/index.js";
import type { SandboxMode } from "../../sandbox/index.js";
import type { NetworkSetting } from "../../network/index.js";

async function kernelSpecSummary(env: NodeJS.ProcessEnv): Promise<KernelSpecSummary> {
  const listing = await listKernelSpecs(env);
  return { names: listing.specs.map((entry) => entry.name), problems: listing.problems.map((p) => p.message) };
}

const STATUS_STYLE: Readonly<Record<CheckStatus, "green" | "yellow" | "red">> = { ok: "green", warn: "yellow", fail: "red" };

/** Each check on a line (detail and fix wrapped to the terminal's width under their column), then the tally. */
function render(report: DoctorReport, style: Style): string {
  const width = Math.max(...report.checks.map((check) => check.name.length));
  const indent = " ".repeat(width + 8);
  const room = Math.max(30, TERMINAL_COLUMNS - indent.length);
  // Details quote paths and kernelspec names found on disk.
  const lines = report.checks.flatMap((check) => {
    const detail = wrap(visibleControls(check.detail), room);
    const fix = check.fix ? wrap(`fix: ${visibleControls(check.fix)}`, room) : [];
    const status = style[STATUS_STYLE[check.status]](check.status.padEnd(5));
    return [`${status} ${check.name.padEnd(width)}  ${detail[0]}`, ...[...detail.slice(1), ...fix].map((line) => indent + line)];
  });
  const failed = report.checks.filter((check) => check.status === "fail").length;
  const warned = report.checks.filter((check) => check.status === "warn").length;
  lines.push("", `albedo doctor: ${failed} failed, ${warned} warning${warned === 1 ? "" : "s"}, ${report.checks.length - failed - warned} ok`);
  return `${lines.join("\n")}\n`;
}

/** `--remote URL`: the server's checks, with token_env and kernel_name from the global kernel.remote settings. */
async function remoteReport(args: ParsedArgs, io: CliIO): Promise<DoctorReport> {
  const { settings } = await readSettings(globalSettingsTarget(stateDir(io.env)));
  const remote = resolveRemoteKernel(settings.kernel?.remote, remoteOf(args), io.env)!;
  const checks = await remoteDoctor(remote);
  return { ok: checks.every((check) => check.status !== "fail"), checks };
}

/**
 * What doctor takes from the global settings: `python.packages`, the `sandbox` mode a kernel start
 * would use, and `mcp`. A settings file that cannot be read is reported, not thrown (the sandbox is then "auto").
 */
async function doctorSettings(env: NodeJS.ProcessEnv): Promise<{ packages: DoctorPackages; sandbox: SandboxMode; network: NetworkSetting; mcp?: McpSection; packagesMB?: number }> {
  try {
    const { settings } = await readSettings(globalSettingsTarget(stateDir(env)));
    return {
      packages: { requirements: settings.python?.packages ?? [] }, sandbox: settings.sandbox ?? "auto", network: settings.network ?? false, ...(settings.mcp ? { mcp: settings.mcp } : {}),
      ...(settings.limits?.packagesMB !== undefined ? { packagesMB: settings.limits.packagesMB } : {}),
    };
  } catch (error) {
    if (error instanceof SettingsFileError) return { packages: { requirements: [], unreadable: error.message }, sandbox: "auto", network: false };
    throw error;
  }
}

/** This machine's checks (the Python domain's, then bubblewrap under the sandbox setting), the albedo kernelspec's, the daemon's and each global MCP server's. */
async function localReport(env: NodeJS.ProcessEnv, cwd: string): Promise<DoctorReport> {
  const { packages, sandbox, network, mcp, packagesMB } = await doctorSettings(env);
  const base = await runDoctor({ env, kernelSpecs: kernelSpecSummary, packages });
  const bubblewrap = checkBubblewrap(env, sandbox);
  const kernelspec = await checkAlbedoKernelSpec(env);
  const checks = [...base.checks, bubblewrap, kernelspec, checkNotebookSandbox(kernelspec, bubblewrap, sandbox), checkNetwork(network, bubblewrap, sandbox), await checkPackageLayer(env, cwd, packagesMB), await checkDaemon(env), ...(await checkMcpServers(env, mcp, cwd, sandbox))];
  return { ok: checks.every((check) => check.status !== "fail"), checks };
}

export const doctorCommand: CliCommand = {
  options: [JSON_OPTION, REMOTE_OPTION],
  async run(args, io) {
    const report = remoteOf(args) ? await remoteReport(args, io) : await localReport(io.env, io.cwd);
    if (args.options.has("json")) writeJson(io, report);
    else io.stdout.write(render(report, styleFor(io.stdout, io.env)));
    return report.ok ? 0 : 1;
  },
};
