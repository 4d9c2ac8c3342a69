import { resolve } from "node:path";
import { skillCommandName } from "../../commands/index.js";
import { discoverCatalog, renderInstructions, renderSkillsPrompt, selectSkills, validateSkillPath } from "../../skills/index.js";
import type { CatalogSnapshot, Diagnostic, Problem, SkillValidation } from "../../skills/index.js";
import { effectiveEnablement, globalSettingsTarget, projectSettingsTarget, readSettings, type Enablement } from "../../settings/index.js";
import { shortRevision, table, textColumns, visibleControls, wrap } from "../../text/index.js";
import { UsageError, type ParsedArgs } from "../plumbing/args.js";
import { workspaceOf } from "../plumbing/workspace.js";
import { JSON_OPTION, WORKSPACE_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { styleFor } from "../terminal/style.js";
import { homeDir, stateDir } from "../../platform/index.js";

/** Most paths one `albedo skills validate` checks. */
export const MAX_VALIDATE_PATHS = 128;

/** The workspace's catalog as a session would see it: every discovered skill, the enabled ones, and each one's verdict (D-4). */
interface SettledCatalog {
  readonly discovered: CatalogSnapshot;
  readonly enabled: CatalogSnapshot;
  readonly effective: ReadonlyMap<string, Enablement>;
}

/** Discovers the catalog and applies the global and project settings; throws SettingsFileError for a malformed file (never read as empty). */
async function settledCatalog(args: ParsedArgs, io: CliIO): Promise<SettledCatalog> {
  const workspace = await workspaceOf(args, io);
  const state = stateDir(io.env);
  const [discovered, global, project] = await Promise.all([
    discoverCatalog({ workspace, home: homeDir(io.env) }),
    readSettings(globalSettingsTarget(state)),
    readSettings(projectSettingsTarget(workspace, state)),
  ]);
  const scopes = { global: global.settings, project: project.settings };
  const effective = new Map(discovered.skills.map((s) => [s.name, effectiveEnablement(s.name, scopes)] as const));
  return { discovered, enabled: selectSkills(discovered, (s) => effective.get(s.name)!.enabled), effective };
}

/** A diagnostic as two or more lines: severity, code and path, then the message wrapped under them. */
function diagnosticLines(d: Diagnostic, workspace: string, columns: number): string[] {
  const path = d.path.startsWith(`${workspace}/`) ? d.path.slice(workspace.length + 1) : d.path;
  return [visibleControls(`  ${d.severity} ${d.code}  ${path}`), ...wrap(visibleControls(d.message), columns - 4).map((line) => `    ${line}`)];
}

/** Diagnostics that make `skills list --strict` fail: errors, and unknown fields (errors under strict validation, S-4). */
function strictFailures(snapshot: CatalogSnapshot): Diagnostic[] {
  return snapshot.diagnostics.filter((d) => d.severity === "error" || d.code === "unknown_field");
}

/** The table laid out for `columns`: a terminal's width, TERMINAL_COLUMNS when piped. */
function listTable(catalog: SettledCatalog, columns: number): string {
  const { discovered, effective } = catalog;
  const rows = discovered.skills.map((s) => {
    const verdict = effective.get(s.name)!;
    const command = skillCommandName(s.name);
    // The command is `/name` but for a skill named like a built-in; only then is it worth a word.
    const note = command === `/${s.name}` ? "" : ` (command ${command})`;
    return [visibleControls(s.name), s.scope, `${verdict.enabled ? "on" : "off"}, ${verdict.decidedBy}`, visibleControls(s.description + note)];
  });
  const lines = discovered.skills.length === 0 ? ["no skills found"] : table(["NAME", "SCOPE", "ENABLED, BY", "DESCRIPTION"], rows, columns);
  if (discovered.diagnostics.length > 0) lines.push("", "diagnostics:", ...discovered.diagnostics.flatMap((d) => diagnosticLines(d, discovered.workspace, columns)));
  lines.push("", `revision ${shortRevision(discovered.revision)}`);
  return `${lines.join("\n")}\n`;
}

/** `albedo skills list`: the catalog's entries with their enablement, diagnostics and revision. */
export const skillsList: CliCommand = {
  options: [WORKSPACE_OPTION, { name: "strict", help: "exit 1 when any skill is invalid or has unknown fields (for CI)" }, JSON_OPTION],
  async run(args, io) {
    const catalog = await settledCatalog(args, io);
    const { discovered, effective } = catalog;
    if (args.options.has("json")) {
      writeJson(io, {
        revision: discovered.revision,
        skills: discovered.skills.map(({ name, description, source, scope }) => {
          const verdict = effective.get(name)!;
          return { name, description, source, command: skillCommandName(name), scope, enabled: verdict.enabled, decided_by: verdict.decidedBy };
        }),
        diagnostics: discovered.diagnostics.map(({ severity, code, path, message }) => ({ severity, code, path, message })),
      });
    } else {
      io.stdout.write(listTable(catalog, textColumns(io.stdout.columns)));
    }
    if (!args.options.has("strict")) return 0;
    const failures = strictFailures(discovered);
    if (failures.length > 0) io.stderr.write(`albedo skills list --strict: ${failures.length} problem${failures.length === 1 ? "" : "s"} make skills invalid\n`);
    return failures.length === 0 ? 0 : 1;
  },
};

function problemLines(label: string, problems: readonly Problem[]): string[] {
  return problems.flatMap((p) => [
    visibleControls(`  ${label} ${p.code}: ${p.message}`),
    ...(p.fix ? [visibleControls(`    fix: ${p.fix}`)] : []),
  ]);
}

const problemJson = (list: readonly Problem[]) => list.map(({ code, message, line, fix }) => ({ code, message, ...(line !== undefined ? { line } : {}), ...(fix ? { fix } : {}) }));

/** `albedo skills validate PATH…`: exit 0 when every skill is valid, 1 when any is not. */
export const skillsValidate: CliCommand = {
  options: [{ name: "strict", help: "treat unknown frontmatter fields as errors (skills-ref verdicts)" }, JSON_OPTION],
  async run(args, io) {
    if (args.positionals.length === 0) throw new UsageError("name at least one skill directory or SKILL.md");
    if (args.positionals.length > MAX_VALIDATE_PATHS) throw new UsageError(`at most MAX_VALIDATE_PATHS = ${MAX_VALIDATE_PATHS} paths, got ${args.positionals.length}`);
    const results: { given: string; path: string; result: SkillValidation }[] = [];
    for (const given of args.positionals) {
      const path = resolve(io.cwd, given);
      results.push({ given, path, result: await validateSkillPath(path, { strict: args.options.has("strict") }) });
    }
    const allValid = results.every(({ result }) => result.valid);
    if (args.options.has("json")) {
      const one = ({ result }: (typeof results)[number]) => ({ valid: result.valid, errors: problemJson(result.errors), warnings: problemJson(result.warnings) });
      // One PATH keeps the documented single-skill shape; several add the path to each.
      writeJson(io, results.length === 1 ? one(results[0]!) : { valid: allValid, results: results.map((r) => ({ path: r.path, ...one(r) })) });
      return allValid ? 0 : 1;
    }
    const style = styleFor(io.stdout, io.env);
    const lines = results.flatMap(({ given, result }) => [
      `${visibleControls(given)}: ${result.valid ? style.green("valid") : style.red("invalid")}`,
      ...problemLines("error", result.errors),
      ...problemLines("warning", result.warnings),
    ]);
    if (results.length > 1) lines.push(`${results.filter((r) => r.result.valid).length} of ${results.length} valid`);
    io.stdout.write(`${lines.join("\n")}\n`);
    return allValid ? 0 : 1;
  },
};

/** `albedo skills prompt`: the catalog block exactly as a model receives it, settings applied. */
export const skillsPrompt: CliCommand = {
  options: [WORKSPACE_OPTION, { name: "instructions", help: "print the instruction files' block first" }],
  async run(args, io) {
    // Printed as is: both renderers already show control characters visibly, as the model gets them.
    const { enabled } = await settledCatalog(args, io);
    const instructions = args.options.has("instructions") ? renderInstructions(enabled) : "";
    io.stdout.write(instructions + renderSkillsPrompt(enabled, skillCommandName));
    return 0;
  },
};
