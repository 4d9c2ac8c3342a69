/**
 * The extra packages a person asks `albedo setup` to install beside the kernel's requirements
 * (`--with`, the `python.packages` setting): plain requirements on the package index, and nothing
 * pip would read as an option, a file, a URL or a path. Each is judged against what an interpreter
 * has installed.
 */
import { MAX_EXTRA_PACKAGES, MAX_PACKAGE_REQUIREMENT_LENGTH } from "./limits.js";
import { parseRequirement, satisfies } from "./requirements.js";

const NAME = "[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
const SPECIFIER = "(?:~=|===|==|!=|<=|>=|<|>)\\s*[A-Za-z0-9.*+!_-]+";
/** A name, optional [extras], optional comma-separated version specifiers: PEP 508 without URLs or markers. */
const REQUIREMENT = new RegExp(`^${NAME}\\s*(?:\\[\\s*${NAME}(?:\\s*,\\s*${NAME})*\\s*\\])?\\s*(?:${SPECIFIER}(?:\\s*,\\s*${SPECIFIER})*)?$`);
const EXAMPLES = "numpy, pandas>=2,<3 or pandas[excel]";

/** Why `value` cannot be an extra package's requirement, or undefined when it can. */
export function packageProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return `a package must be a requirement string such as ${EXAMPLES}`;
  const text = value.trim();
  if (text.length === 0) return "a package must not be empty";
  if ([...text].length > MAX_PACKAGE_REQUIREMENT_LENGTH) return `a package has ${[...text].length} characters; at most ${MAX_PACKAGE_REQUIREMENT_LENGTH} (MAX_PACKAGE_REQUIREMENT_LENGTH)`;
  const quoted = JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  if (text.startsWith("-")) return `${quoted} is a pip option; only requirements such as ${EXAMPLES} are installed`;
  if (/[:/\\@;]/.test(text)) return `${quoted} names a URL, a path or a marker; only packages from the index, such as ${EXAMPLES}, are installed`;
  if (!REQUIREMENT.test(text)) return `${quoted} is not a requirement such as ${EXAMPLES}`;
  return undefined;
}

/** Why `list` cannot be a list of extra packages (its length first, then its first bad entry), or undefined. */
export function packagesProblem(list: readonly unknown[]): string | undefined {
  if (list.length > MAX_EXTRA_PACKAGES) return `lists ${list.length} packages; at most ${MAX_EXTRA_PACKAGES} (MAX_EXTRA_PACKAGES)`;
  for (const item of list) {
    const problem = packageProblem(item);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The distribution name of a checked requirement, as pip compares names (lowercase, runs of `-_.` as `-`). */
export function packageName(requirement: string): string {
  return new RegExp(`^${NAME}`).exec(requirement.trim())![0].toLowerCase().replace(/[-_.]+/g, "-");
}

/** `--with`'s value as requirements: split at commas that start a new package, not inside [extras] or between version specifiers. */
export function splitPackages(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "[") depth++;
    else if (char === "]") depth = Math.max(0, depth - 1);
    else if (char === "," && depth === 0 && !/^\s*[<>=!~]/.test(text.slice(i + 1))) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part.length > 0);
}

/** One extra package as an interpreter has it. */
export interface PackageState {
  readonly requirement: string;
  readonly name: string;
  /** The installed version, or null when it is not installed. */
  readonly version: string | null;
  /** Installed, and at a version the requirement allows (when this checker can judge its specifiers). */
  readonly met: boolean;
}

/** Each package against the installed versions a probe reported (by distribution name). */
export function judgePackages(packages: readonly string[], installed: Readonly<Record<string, string | null>>): PackageState[] {
  return packages.map((requirement) => {
    const name = packageName(requirement);
    const version = installed[name] ?? null;
    const parsed = parseRequirement(requirement);
    // Specifiers this checker cannot judge (~=, wildcards, extras) count as met once installed: pip judged them when it installed it.
    const met = version !== null && (!parsed.checkable || satisfies(parsed, version));
    return { requirement, name, version, met };
  });
}

/** Requirements and names without repeats, in first-seen order. */
export function uniquePackages(lists: readonly (readonly string[])[]): string[] {
  const seen = new Map<string, string>();
  for (const requirement of lists.flat()) if (!seen.has(packageName(requirement))) seen.set(packageName(requirement), requirement.trim());
  return [...seen.values()];
}
