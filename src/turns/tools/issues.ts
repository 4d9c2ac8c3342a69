/**
 * A tool call's argument problems as one readable line, for the model and for the person reading
 * the turn's rows: "name must be one of "a", "b" (got "nope")", not zod's "✖ Invalid option" layout.
 */
import type { z } from "zod";

/** Problems named in one line; the rest are counted. */
export const MAX_SHOWN_ISSUES = 3;
/** Characters of an offending value quoted back. */
const MAX_QUOTED_CHARS = 40;

type Issue = z.core.$ZodIssue;

/** `issues` of a failed check of `value`, each as "FIELD must …", joined by "; ". */
export function readableIssues(issues: readonly Issue[], value: unknown): string {
  const shown = issues.slice(0, MAX_SHOWN_ISSUES).map((issue) => problem(issue, valueAt(value, issue.path)));
  const more = issues.length > MAX_SHOWN_ISSUES ? `; and ${issues.length - MAX_SHOWN_ISSUES} more` : "";
  return `${shown.join("; ")}${more}`;
}

function field(path: readonly PropertyKey[]): string {
  return path.length === 0 ? "the arguments" : path.map(String).join(".");
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) at = typeof at === "object" && at !== null ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS - 1)}…` : text;
}

function problem(issue: Issue, got: unknown): string {
  const name = field(issue.path);
  switch (issue.code) {
    case "invalid_value":
      return `${name} must be one of ${issue.values.map((one) => quoted(one)).join(", ")} (got ${quoted(got)})`;
    case "invalid_type":
      return got === undefined ? `${name} is missing (a ${issue.expected})` : `${name} must be a ${issue.expected} (got ${quoted(got)})`;
    case "unrecognized_keys":
      return `unknown field${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((key) => quoted(key)).join(", ")}${issue.path.length === 0 ? "" : ` in ${name}`}`;
    case "too_small":
      return issue.origin === "string" && Number(issue.minimum) === 1 ? `${name} must not be empty` : `${name} is too small: ${issue.message}`;
    default:
      return `${name}: ${issue.message.replace(/^\W+\s*/, "")}`;
  }
}
