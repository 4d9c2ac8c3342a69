import { resolve } from "node:path";
import { homeDir } from "../settings/paths.js";
import { skillCommandName } from "../commands/index.js";
import { discoverCatalog, renderInstructions, renderSkillsPrompt, validateSkillPath } from "../skills/index.js";
import type { CatalogSnapshot, Diagnostic, Problem } from "../skills/index.js";
import { visibleControls } from "../text/index.js";
import { UsageError, type ParsedArgs } from "./args.js";
import { workspaceOf } from "./workspace.js";
import { JSON_OPTION, WORKSPACE_OPTION, writeJson, type CliCommand, type CliIO } from "./command.js";

/** Width a description is cut to in the `skills list` table. */
const LIST_DESCRIPTION_WIDTH = 60;

async function catalogFor(args: ParsedArgs, io: CliIO): Promise<CatalogSnapshot> {
  return discoverCatalog({ workspace: await workspaceOf(args, io), home: homeDir(io.env) });
}

function diagnosticLine(d: Diagnostic): string {
  return visibleControls(`  ${d.severity} ${d.code} ${d.path}: ${d.message}`);
}

/** One line of at most `width` characters, control characters shown visibly. */
function cut(text: string, width: number): string {
  const line = visibleControls(text.replace(/\s+/g, " ").trim());
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

function listTable(snapshot: CatalogSnapshot): string {
  const rows = snapshot.skills.map((s) => [visibleControls(s.name), s.scope, visibleControls(skillCommandName(s.name)), cut(s.description, LIST_DESCRIPTION_WIDTH)]);
  const header = ["NAME", "SCOPE", "COMMAND", "DESCRIPTION"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (row: string[]) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  const lines = snapshot.skills.length === 0 ? ["no skills found"] : [format(header), ...rows.map(format)];
  if (snapshot.diagnostics.length > 0) lines.push("", "diagnostics:", ...snapshot.diagnostics.map(diagnosticLine));
  lines.push("", `revision ${snapshot.revision}`);
  return `${lines.join("\n")}\n`;
}

/** `albedo skills list`: the catalog's entries, diagnostics and revision. */
export const skillsList: CliCommand = {
  path: ["skills", "list"],
  summary: "list the skills this workspace's catalog holds, with diagnostics",
  usage: "",
  options: [WORKSPACE_OPTION, JSON_OPTION],
  async run(args, io) {
    const snapshot = await catalogFor(args, io);
    if (!args.options.has("json")) {
      io.stdout.write(listTable(snapshot));
      return 0;
    }
    writeJson(io, {
      revision: snapshot.revision,
      skills: snapshot.skills.map(({ name, description, source, scope }) => ({ name, description, source, command: skillCommandName(name), scope })),
      diagnostics: snapshot.diagnostics.map(({ severity, code, path, message }) => ({ severity, code, path, message })),
    });
    return 0;
  },
};

function problemLines(label: string, problems: readonly Problem[]): string[] {
  return problems.map((p) => visibleControls(`  ${label} ${p.code}: ${p.message}`));
}

/** `albedo skills validate PATH`: exit 0 when the skill is valid, 1 when not. */
export const skillsValidate: CliCommand = {
  path: ["skills", "validate"],
  summary: "validate one skill directory or SKILL.md against the Agent Skills rules",
  usage: "PATH",
  options: [{ name: "strict", help: "treat unknown frontmatter fields as errors (skills-ref verdicts)" }, JSON_OPTION],
  async run(args, io) {
    if (args.positionals.length !== 1) throw new UsageError("expected exactly one PATH");
    const path = resolve(io.cwd, args.positionals[0]!);
    const result = await validateSkillPath(path, { strict: args.options.has("strict") });
    const strip = (list: readonly Problem[]) => list.map(({ code, message }) => ({ code, message }));
    if (args.options.has("json")) {
      writeJson(io, { valid: result.valid, errors: strip(result.errors), warnings: strip(result.warnings) });
    } else {
      const lines = [visibleControls(`${path}: ${result.valid ? "valid" : "invalid"}`), ...problemLines("error", result.errors), ...problemLines("warning", result.warnings)];
      io.stdout.write(`${lines.join("\n")}\n`);
    }
    return result.valid ? 0 : 1;
  },
};

/** `albedo skills prompt`: the catalog block exactly as a model receives it. */
export const skillsPrompt: CliCommand = {
  path: ["skills", "prompt"],
  summary: "print the skill catalog block exactly as a model receives it",
  usage: "",
  options: [WORKSPACE_OPTION, { name: "instructions", help: "print the instruction files' block first" }],
  async run(args, io) {
    // Printed as is: both renderers already show control characters visibly, as the model gets them.
    const snapshot = await catalogFor(args, io);
    const instructions = args.options.has("instructions") ? renderInstructions(snapshot) : "";
    io.stdout.write(instructions + renderSkillsPrompt(snapshot, skillCommandName));
    return 0;
  },
};

/** The skills commands this module contributes to the registry. */
export const SKILLS_COMMANDS: readonly CliCommand[] = [skillsList, skillsValidate, skillsPrompt];
