import { JSON_OPTION, writeJson, type CliCommand } from "./command.js";
import { checkAlbedoKernelSpec, checkDaemon } from "./doctorChecks.js";
import { styleFor, type Style } from "./style.js";
import { listKernelSpecs } from "../kernel/kernelspecs.js";
import { runDoctor, type CheckStatus, type DoctorReport, type KernelSpecSummary } from "../python/index.js";
import { visibleControls, wrap, TERMINAL_COLUMNS } from "../text/index.js";

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

export const doctorCommand: CliCommand = {
  path: ["doctor"],
  summary: "check Node, Python, ipykernel, kernelspecs (and that the albedo one runs this install), the state dir, bubblewrap and the daemon, each with a fix",
  usage: "",
  options: [JSON_OPTION],
  async run(args, io) {
    const base = await runDoctor({ env: io.env, kernelSpecs: kernelSpecSummary });
    const checks = [...base.checks, await checkAlbedoKernelSpec(io.env), await checkDaemon(io.env)];
    const report: DoctorReport = { ok: checks.every((check) => check.status !== "fail"), checks };
    if (args.options.has("json")) writeJson(io, report);
    else io.stdout.write(render(report, styleFor(io.stdout, io.env)));
    return report.ok ? 0 : 1;
  },
};
