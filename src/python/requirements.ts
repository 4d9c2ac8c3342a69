import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The oldest ipykernel major version the kernel package supports. */
export const MIN_IPYKERNEL_MAJOR = 7;
/** Largest requirements file read, in bytes. */
export const MAX_REQUIREMENTS_BYTES = 16 * 1024;

type Operator = ">=" | ">" | "==" | "<=" | "<" | "!=";

export interface Requirement {
  /** Distribution name, lowercased (pip's comparison is case-insensitive). */
  readonly name: string;
  readonly constraints: readonly { readonly op: Operator; readonly version: string }[];
  /** The line as written, for messages. */
  readonly text: string;
  /** False when the line uses syntax this checker does not judge (extras, markers, ~=, URLs). */
  readonly checkable: boolean;
}

/** The path of the kernel package's requirements file under an install directory. */
export function requirementsFile(install: string): string {
  return join(install, "kernel", "requirements.txt");
}

/** Parses a pip requirements file's simple lines; throws when the file cannot be read or is too large. */
export function readRequirements(file: string): Requirement[] {
  const text = readFileSync(file, "utf8");
  if (Buffer.byteLength(text) > MAX_REQUIREMENTS_BYTES) {
    throw new Error(`${file} is ${Buffer.byteLength(text)} bytes; MAX_REQUIREMENTS_BYTES is ${MAX_REQUIREMENTS_BYTES}`);
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
    .filter((line) => line.length > 0)
    .map(parseRequirement);
}

const SIMPLE = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*((?:(?:>=|<=|==|!=|>|<)\s*[0-9][0-9A-Za-z.]*\s*,?\s*)*)$/;

/** One requirement line as this checker reads it; `checkable` is false for syntax it does not judge. */
export function parseRequirement(line: string): Requirement {
  const match = SIMPLE.exec(line);
  if (match === null) return { name: line.toLowerCase(), constraints: [], text: line, checkable: false };
  const constraints = [...match[2]!.matchAll(/(>=|<=|==|!=|>|<)\s*([0-9][0-9A-Za-z.]*)/g)].map((m) => ({
    op: m[1] as Operator,
    version: m[2]!,
  }));
  return { name: match[1]!.toLowerCase().replace(/[._]/g, "-"), constraints, text: line, checkable: true };
}

/** Compares dotted versions by their leading numeric parts: negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = numericParts(a);
  const pb = numericParts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

function numericParts(version: string): number[] {
  const parts: number[] = [];
  for (const piece of version.split(".")) {
    const digits = /^\d+/.exec(piece);
    if (digits === null) break;
    parts.push(Number(digits[0]));
    if (digits[0].length !== piece.length) break;
  }
  return parts;
}

/** True when an installed version (undefined = not installed) meets every constraint of a checkable requirement. */
export function satisfies(requirement: Requirement, installed: string | undefined): boolean {
  if (!requirement.checkable || installed === undefined) return false;
  return requirement.constraints.every(({ op, version }) => {
    const c = compareVersions(installed, version);
    switch (op) {
      case ">=": return c >= 0;
      case ">": return c > 0;
      case "==": return c === 0;
      case "<=": return c <= 0;
      case "<": return c < 0;
      case "!=": return c !== 0;
    }
  });
}
