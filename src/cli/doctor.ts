import { JSON_OPTION, REMOTE_OPTION, writeJson, type CliCommand, type CliIO } from "./command.js";
import { remoteDoctor, resolveRemoteKernel } from "../kernel/index.js";
import { globalSettingsTarget, readSettings, stateDir } from "../settings/index.js";
import { remoteOf } from "./session.js";
import type { ParsedArgs } from "./args.js";
import { listKernelSpecs } from "../kernel/kernelspecs.js";
import { runDoctor, type DoctorReport, type KernelSpecSummary } from "../python/index.js";
import { visibleControls } from "../text/index.js";

async function kernelSpecSummary(env: NodeJS.ProcessEnv): Promise<KernelSpecSummary> {
  const listing = await listKernelSpecs(env);
  return { names: listing.specs.map((entry) => entry.name), problems: listing.problems.map((p) => p.message) };
}

function render(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((check) => check.name.length));
  // Details quote paths and kernelspec names found on disk.
  const lines = report.checks.flatMap((check) => [
    `${check.status.padEnd(5)} ${check.name.padEnd(width)}  ${visibleControls(check.detail)}`,
    ...(check.fix ? [`${" ".repeat(width + 7)}fix: ${visibleControls(check.fix)}`] : []),
  ]);
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

export const doctorCommand: CliCommand = {
  path: ["doctor"],
  summary: "check Node, the Python interpreter, ipykernel, kernelspecs, the state dir and bubblewrap, each with a fix",
  usage: "",
  options: [JSON_OPTION, REMOTE_OPTION],
  async run(args, io) {
    const report = remoteOf(args) ? await remoteReport(args, io) : await runDoctor({ env: io.env, kernelSpecs: kernelSpecSummary });
    if (args.options.has("json")) writeJson(io, report);
    else io.stdout.write(render(report));
    return report.ok ? 0 : 1;
  },
};
