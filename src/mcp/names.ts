/** Names of servers and tools (M-1, M-3): what a server may be called, which tool names are kept, and the qualified form `server.tool`. */
import { nameRuleProblems, normalizeName } from "../skills/index.js";
import { MAX_MCP_TOOL_NAME_LENGTH } from "./limits.js";

/** Why `name` cannot name a server (the skill-name rule: lowercase letters, digits and single hyphens, at most 64), or undefined. */
export function serverNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "a server name must not be empty";
  if (normalizeName(name) !== name) return `server name "${name}" must be in Unicode NFKC form ("${normalizeName(name)}")`;
  const problems = nameRuleProblems(name);
  return problems.length === 0 ? undefined : problems.map((problem) => problem.message.replace(/^skill name/, "server name")).join("; ");
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Characters no one sees: format characters (zero-width spaces and joiners, bidirectional marks, the BOM) and separators (spaces of every width). */
const INVISIBLE = /[\p{Cf}\p{Z}]/u;

/**
 * Why a server's tool name is not kept, or undefined. Names that are not Python identifiers are
 * kept (mangling them is the kernel layer's business); a "." would make `server.tool` ambiguous.
 * A name must read as what it is: one outside NFKC form (full-width letters, ligatures) or with
 * an invisible character could pass, in a list the model or a person reads, for another tool's.
 * Such a name is refused, not normalised: calls must reach the server under its own name, and
 * two names that normalise alike would collide.
 */
export function toolNameProblem(name: string): string | undefined {
  if (name.length === 0) return "is empty";
  if (name.length > MAX_MCP_TOOL_NAME_LENGTH) return `is ${name.length} characters; at most ${MAX_MCP_TOOL_NAME_LENGTH} (MAX_MCP_TOOL_NAME_LENGTH)`;
  if (name.includes(".")) return `contains "."; it could not be told apart from "server.tool"`;
  if (CONTROL.test(name)) return "contains control characters";
  if (INVISIBLE.test(name)) return "contains an invisible character (a zero-width or format character, or a space)";
  if (normalizeName(name) !== name) return `is not in Unicode NFKC form (it would read as ${JSON.stringify(normalizeName(name))})`;
  return undefined;
}

/** `name` with its invisible characters written as `\u` escapes, to quote it in a diagnostic. */
export function visibleToolName(name: string): string {
  return name.replace(new RegExp(INVISIBLE.source, "gu"), (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, "0")}`);
}

/** `server.tool` split at its first "." (server names have none), or undefined when there is no ".". */
export function splitQualified(qualified: string): { readonly server: string; readonly tool: string } | undefined {
  const dot = qualified.indexOf(".");
  if (dot <= 0 || dot === qualified.length - 1) return undefined;
  return { server: qualified.slice(0, dot), tool: qualified.slice(dot + 1) };
}
