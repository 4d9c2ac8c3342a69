/**
 * YAML mistakes people make in SKILL.md frontmatter, told the way a person fixes them: the
 * SKILL.md line number, the line itself, and what to write instead. The yaml package's own
 * messages name the parser's view ("nested mappings are not allowed in compact mappings"),
 * which rarely says that an unquoted `: ` inside a description is the problem.
 */
import type { Problem } from "./types.js";
import { MAX_QUOTED_LINE_CHARS } from "./limits.js";


/** What the yaml package reports for one error: its code, message and 1-based line in the YAML text. */
export interface YamlErrorInfo {
  readonly code: string;
  readonly message: string;
  readonly line: number | undefined;
}

/** `key: value` on one line, the value unquoted. */
const PLAIN_PAIR = /^(\s*)([^\s:#][^:]*?):\s+(.*\S)\s*$/;
/** Characters that may not start a plain YAML value. */
const RESERVED_START = /^[[\]{}*&!|>'"%@`#,]/;

/** The value of `key: value` written as a double-quoted YAML string. */
function quoted(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function fixFor(error: YamlErrorInfo, text: string): string | undefined {
  const pair = PLAIN_PAIR.exec(text);
  const value = pair?.[3];
  if (/\t/.test(text.slice(0, text.length - text.trimStart().length)) || error.code === "TAB_AS_INDENT") return "indent with spaces; YAML does not allow tabs there";
  if (error.code === "DUPLICATE_KEY") return "each field may appear once; keep one of them";
  if (pair === null || value === undefined) return undefined;
  const line = `${pair[1]}${pair[2]}: ${quoted(value)}`;
  if (/:\s/.test(value) || value.endsWith(":")) return `a value containing ": " must be quoted: ${line}`;
  if (/\s#/.test(value)) return `" #" starts a comment; quote the value to keep it: ${line}`;
  if (RESERVED_START.test(value)) return `a value starting with ${JSON.stringify(value[0])} must be quoted: ${line}`;
  return undefined;
}

/**
 * One problem for a YAML parse error: `invalid YAML on line N of SKILL.md: <what> (the line)` and,
 * when the mistake is a known one, a fix. `firstLine` is the SKILL.md line the YAML text starts on.
 */
export function yamlProblem(error: YamlErrorInfo, yamlText: string, firstLine: number): Problem {
  const what = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "").trim();
  if (error.line === undefined) return { code: "yaml_error", message: `invalid YAML: ${what}` };
  const text = yamlText.split("\n")[error.line - 1] ?? "";
  const shown = text.length > MAX_QUOTED_LINE_CHARS ? `${text.slice(0, MAX_QUOTED_LINE_CHARS)}…` : text;
  const line = error.line + firstLine - 1;
  const fix = fixFor(error, text);
  return { code: "yaml_error", message: `invalid YAML on line ${line}: ${lowerFirst(what)}: ${shown.trim()}`, line, ...(fix ? { fix } : {}) };
}

function lowerFirst(text: string): string {
  return text.length > 0 ? text[0]!.toLowerCase() + text.slice(1) : text;
}
