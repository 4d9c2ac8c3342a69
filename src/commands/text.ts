/**
 * Built-in results as a person reads them in a console or a notebook: lists and tables that fit
 * the width they are rendered for (a console's terminal; TERMINAL_COLUMNS where none is known),
 * revisions shortened. Python and `--json` keep the data; only faces that show
 * text to a person call these. Every value shown may come from a file anyone wrote, so each one
 * passes through visibleControls.
 */
import { cut, hangingRow, jsonWithoutControls, shortRevision, table, TERMINAL_COLUMNS, visibleControls, wrap } from "../text/index.js";
import { usageLine, type UsageTotals } from "../model/index.js";
import type { ArgumentSpec } from "./types.js";

/** Left column of a command row in /help. */
const USAGE_COLUMN = 24;
/** Left column of a /status row. */
const STATUS_COLUMN = 13;

type Data = Record<string, unknown>;

const asData = (value: unknown): Data => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Data) : {});
const asList = (value: unknown): Data[] => (Array.isArray(value) ? value.map(asData) : []);
const str = (value: unknown): string => visibleControls(typeof value === "string" ? value : value === undefined || value === null ? "" : String(value));
const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`;
const lines = (rows: readonly string[]): string => `${rows.join("\n")}\n`;
/** The text up to the end of its first sentence. */
const firstSentence = (text: string): string => /^.*?[.!?](?=\s|$)/s.exec(text)?.[0] ?? text;

/** `/help`: every command with its description, or one command's arguments. */
export function helpText(value: unknown, columns = TERMINAL_COLUMNS): string {
  const data = asData(value);
  if (Array.isArray(data.commands)) {
    // One line per command: a skill's description can run to a paragraph; /help <command> shows it whole.
    const rows = asList(data.commands).flatMap((c) => hangingRow(`  ${str(c.usage)}  `, cut(firstSentence(str(c.description)), columns - USAGE_COLUMN), USAGE_COLUMN, columns));
    return lines(["commands:", ...rows, "", "/help <command> shows its arguments; Tab completes names and arguments."]);
  }
  const args = asList(data.arguments) as unknown as ArgumentSpec[];
  const argumentRows = args.flatMap((a) => hangingRow(`  ${str(a.name)}  `, `${str(a.help)}${a.required ? "" : " (optional)"}`, USAGE_COLUMN, columns));
  return lines([
    str(data.usage),
    ...wrap(str(data.description), columns),
    ...(args.length > 0 ? ["", "arguments:", ...argumentRows] : []),
    ...(Array.isArray(data.callers) ? ["", `called by: ${data.callers.map(str).join(", ")}`] : []),
  ]);
}

/** `/skills`: a table of the session's skills, then diagnostics and the catalog's revision. */
export function skillsText(value: unknown, columns = TERMINAL_COLUMNS): string {
  const data = asData(value);
  const skills = asList(data.skills);
  const rows = skills.map((s) => {
    const note = s.command === `/${str(s.name)}` || s.command === null ? "" : ` (command ${str(s.command)})`;
    return [str(s.name), str(s.scope), str(s.description) + note];
  });
  const diagnostics = asList(data.diagnostics);
  const out = skills.length === 0 ? ["no skills in this session"] : table(["NAME", "SCOPE", "DESCRIPTION"], rows, columns);
  if (diagnostics.length > 0) {
    out.push("", `${plural(diagnostics.length, "diagnostic")}:`);
    for (const d of diagnostics) out.push(`  ${str(d.severity)} ${str(d.code)}  ${str(d.path)}`, ...wrap(str(d.message), columns - 4).map((line) => `    ${line}`));
  }
  out.push("", ...wrap(`${plural(skills.length, "skill")} · revision ${shortRevision(str(data.revision))} · /<name> activates one, /reload session rereads them`, columns));
  return lines(out);
}

/** `/status`: one fact per line. */
export function statusText(value: unknown, columns = TERMINAL_COLUMNS): string {
  const data = asData(value);
  const extensions = Object.entries(asData(data.extensions)).filter(([, on]) => on === true).map(([name]) => name);
  const notes = Array.isArray(data.sandboxNotes) ? data.sandboxNotes.map(str) : [];
  const rows: [string, string][] = [
    ["session", str(data.id)],
    ["kernel", `${str(data.kernel)}${typeof data.pid === "number" ? ` (pid ${data.pid})` : ""}`],
    ["sandbox", str(data.sandbox)],
    ["catalog", `${plural(Number(data.skills ?? 0), "skill")}, revision ${shortRevision(str(data.revision))}`],
    ["extensions", ["python", ...extensions].join(", ")],
    ...(isUsage(data.usage) ? [["usage", usageLine(data.usage).replace(/^usage: /, "")] as [string, string]] : []),
  ];
  return lines([...rows.flatMap(([k, v]) => hangingRow(`${k}  `, v, STATUS_COLUMN, columns)), ...notes.flatMap((note) => hangingRow("  note  ", note, STATUS_COLUMN, columns))]);
}

function isUsage(value: unknown): value is UsageTotals {
  return typeof value === "object" && value !== null && ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "model_calls"].every((key) => typeof (value as Record<string, unknown>)[key] === "number");
}

/** `/reload`: "reloaded: +1 skill (sql-review), 1 skill did not load (broken: …), +1 MCP server (github), 9 skills". */
export function reloadText(value: unknown, columns = TERMINAL_COLUMNS): string {
  const data = asData(value);
  const mcp = asData(data.mcp);
  const changes = [
    ...changed(data.added, (n) => `+${plural(n, "skill")}`),
    ...changed(data.removed, (n) => `-${plural(n, "skill")}`),
    ...failedSkills(data.failed),
    ...changed(mcp.added, (n) => `+${plural(n, "MCP server")}`),
    ...changed(mcp.removed, (n) => `-${plural(n, "MCP server")}`),
    ...changed(mcp.restarted, (n) => `restarted ${plural(n, "MCP server")}`),
    ...changed(mcp.started, (n) => `started ${plural(n, "MCP server")}`),
    ...changed(mcp.stopped, (n) => `stopped ${plural(n, "MCP server")}`),
  ];
  const same = data.revision === data.previousRevision ? "no change" : "skills changed on disk";
  return lines(wrap(`reloaded: ${changes.length > 0 ? changes.join(", ") : same}, ${plural(Number(data.skills ?? 0), "skill")}`, columns));
}

/** "1 skill did not load (broken: missing description; see /skills)" for the reload's failed skills; nothing when none failed. */
function failedSkills(list: unknown): string[] {
  const failed = Array.isArray(list) ? list.map(asData) : [];
  if (failed.length === 0) return [];
  return [`${plural(failed.length, "skill")} did not load (${failed.map((one) => `${str(one.name)}: ${str(one.message)}`).join("; ")}; see /skills)`];
}

/** "+2 skills (a, b)" for a non-empty list of names, with `what` saying how many of what; nothing for an empty one. */
function changed(list: unknown, what: (count: number) => string): string[] {
  const names = Array.isArray(list) ? list.map(str) : [];
  return names.length === 0 ? [] : [`${what(names.length)} (${names.join(", ")})`];
}

/** `/model`: the model settings as `key  value` lines. */
export function modelText(value: unknown, columns = TERMINAL_COLUMNS): string {
  const rows = Object.entries(asData(value));
  // The key column fits the longest key, so each value starts on its key's line.
  const keyWidth = Math.max(0, ...rows.map(([key]) => key.length)) + 2;
  return lines(rows.flatMap(([key, v]) => hangingRow(`${key} `, str(v), keyWidth, columns)));
}

/** A skill activation as a console shows it: the skill and where it came from, then its instructions. */
export function activationText(value: unknown): string {
  const data = asData(value);
  const args = typeof data.arguments === "string" ? data.arguments : JSON.stringify(data.arguments ?? "");
  return lines([
    `activated skill ${str(data.name)} · ${Buffer.byteLength(str(data.instructions))} bytes from ${str(data.source)}`,
    ...(args !== "" ? [`arguments: ${visibleControls(args)}`] : []),
  ]);
}

/**
 * A command's result for a person, laid out for `columns`: the command's own text when it has
 * one, else the data as indented JSON, controls escaped.
 */
export function describeResult(command: { text?(result: unknown, columns?: number): string } | undefined, value: unknown, columns = TERMINAL_COLUMNS): string {
  if (command?.text !== undefined) return command.text(value, columns);
  return `${typeof value === "string" ? visibleControls(value, "\n\t") : jsonWithoutControls(JSON.stringify(value, null, 2))}\n`;
}
