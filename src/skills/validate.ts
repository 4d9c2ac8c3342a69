import { MAX_COMPATIBILITY_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from "./limits.js";
import type { OptionalFields, Problem } from "./types.js";

/** Top-level frontmatter fields the Agent Skills format defines (S-4). */
export const KNOWN_FIELDS: readonly string[] = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"];

const KNOWN = new Set(KNOWN_FIELDS);

/** Outcome of checking one frontmatter mapping; `name` is NFKC-normalised and trimmed. */
export interface FieldValidation {
  name?: string;
  description?: string;
  optional: OptionalFields;
  errors: Problem[];
  warnings: Problem[];
}

/** Counts Unicode code points, as the reference validator does. */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Unicode NFKC form, used for every name comparison (S-2, S-4). */
export function normalizeName(text: string): string {
  return text.normalize("NFKC");
}

/**
 * Checks frontmatter fields against S-4. Unknown fields are warnings, or errors when `strict`.
 * `dirName` is the installed directory (link) name the `name` must equal. Never throws.
 */
export function validateSkillFields(
  fields: Record<string, unknown>,
  dirName: string,
  options: { strict: boolean },
): FieldValidation {
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  for (const key of Object.keys(fields).filter((k) => !KNOWN.has(k)).sort()) {
    const problem = { code: "unknown_field", message: `unknown frontmatter field "${key}"; known fields: ${KNOWN_FIELDS.join(", ")}` };
    (options.strict ? errors : warnings).push(problem);
  }
  const name = checkName(fields, dirName, errors);
  const description = checkDescription(fields, errors);
  const optional = checkOptional(fields, errors);
  return { ...(name === undefined ? {} : { name }), ...(description === undefined ? {} : { description }), optional, errors, warnings };
}

function checkName(fields: Record<string, unknown>, dirName: string, errors: Problem[]): string | undefined {
  if (!("name" in fields)) {
    errors.push({ code: "missing_name", message: "required field \"name\" is missing" });
    return undefined;
  }
  const raw = fields.name;
  if (typeof raw !== "string") {
    errors.push({ code: "invalid_name", message: "field \"name\" must be a string" });
    return undefined;
  }
  if (raw.trim() === "") {
    errors.push({ code: "empty_name", message: "field \"name\" must not be empty" });
    return undefined;
  }
  const name = normalizeName(raw.trim());
  const ruleProblems = nameRuleProblems(name);
  const valid = suggestedName(name);
  // One fix for all of the name's broken rules: the name they lead to.
  errors.push(...ruleProblems.map((problem, i) => (i === 0 && valid !== "" ? { ...problem, fix: `use name: ${valid}` } : problem)));
  const dir = normalizeName(dirName);
  if (dir !== name) {
    // Only a directory name that keeps the rules is offered as the name to set.
    const fix = ruleProblems.length > 0 ? undefined : nameRuleProblems(dir).length === 0 ? `rename the directory to "${name}", or set name: ${dirName}` : `rename the directory to "${name}"`;
    errors.push({ code: "name_directory_mismatch", message: `skill name "${name}" must equal its directory name "${dirName}"`, ...(fix ? { fix } : {}) });
  }
  return name;
}

/**
 * The closest name that keeps every S-4 rule: lowercased, each run of other characters one
 * hyphen, no hyphen at either end, at most MAX_NAME_LENGTH characters. Empty when nothing is left.
 */
export function suggestedName(name: string): string {
  const folded = normalizeName(name).toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "");
  return [...folded].slice(0, MAX_NAME_LENGTH).join("").replace(/-+$/, "");
}

/** The S-4 rules a normalised name must satisfy, each broken rule one problem. */
export function nameRuleProblems(name: string): Problem[] {
  const problems: Problem[] = [];
  const length = codePoints(name);
  if (length > MAX_NAME_LENGTH) {
    problems.push({ code: "name_too_long", message: `skill name is ${length} characters; the limit is MAX_NAME_LENGTH = ${MAX_NAME_LENGTH}` });
  }
  if (name !== name.toLowerCase()) {
    problems.push({ code: "name_not_lowercase", message: `skill name "${name}" must be lowercase` });
  }
  if (name.startsWith("-") || name.endsWith("-")) {
    problems.push({ code: "name_hyphen_edges", message: "skill name must not start or end with a hyphen" });
  }
  if (name.includes("--")) {
    problems.push({ code: "name_consecutive_hyphens", message: "skill name must not contain two hyphens in a row" });
  }
  if (!/^[\p{L}\p{N}-]*$/u.test(name)) {
    problems.push({ code: "name_invalid_characters", message: `skill name "${name}" may hold only letters, digits and hyphens` });
  }
  return problems;
}

function checkDescription(fields: Record<string, unknown>, errors: Problem[]): string | undefined {
  if (!("description" in fields)) {
    errors.push({ code: "missing_description", message: "required field \"description\" is missing" });
    return undefined;
  }
  const raw = fields.description;
  if (typeof raw !== "string") {
    errors.push({ code: "invalid_description", message: "field \"description\" must be a string" });
    return undefined;
  }
  if (raw.trim() === "") {
    errors.push({ code: "empty_description", message: "field \"description\" must not be empty" });
    return undefined;
  }
  const length = codePoints(raw);
  if (length > MAX_DESCRIPTION_LENGTH) {
    errors.push({
      code: "description_too_long",
      message: `description is ${length} characters; the limit is MAX_DESCRIPTION_LENGTH = ${MAX_DESCRIPTION_LENGTH}`,
    });
  }
  return raw.trim();
}

function checkOptional(fields: Record<string, unknown>, errors: Problem[]): OptionalFields {
  const optional: { -readonly [K in keyof OptionalFields]: OptionalFields[K] } = {};
  if ("license" in fields) {
    if (typeof fields.license === "string") optional.license = fields.license;
    else errors.push({ code: "invalid_license", message: "field \"license\" must be a string" });
  }
  if ("compatibility" in fields) {
    const value = fields.compatibility;
    if (typeof value !== "string") {
      errors.push({ code: "invalid_compatibility", message: "field \"compatibility\" must be a string" });
    } else if (codePoints(value) > MAX_COMPATIBILITY_LENGTH) {
      errors.push({
        code: "compatibility_too_long",
        message: `compatibility is ${codePoints(value)} characters; the limit is MAX_COMPATIBILITY_LENGTH = ${MAX_COMPATIBILITY_LENGTH}`,
      });
    } else optional.compatibility = value;
  }
  if ("metadata" in fields) {
    const metadata = stringMap(fields.metadata);
    if (metadata === undefined) errors.push({ code: "invalid_metadata", message: "field \"metadata\" must map string keys to string values" });
    else optional.metadata = metadata;
  }
  if ("allowed-tools" in fields) {
    const tools = toolList(fields["allowed-tools"]);
    if (tools === undefined) {
      errors.push({ code: "invalid_allowed_tools", message: "field \"allowed-tools\" must be a string or a list of strings" });
    } else optional.allowedTools = tools;
  }
  return optional;
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  return entries.every(([, v]) => typeof v === "string") ? (Object.fromEntries(entries) as Record<string, string>) : undefined;
}

/** `allowed-tools` as one space-separated string; a list of strings (accepted by newer skills-ref) is joined. */
function toolList(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value.join(" ");
  return undefined;
}
