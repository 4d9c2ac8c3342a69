import { AppError } from "../errors/index.js";
import type { ArgumentSpec, CommandArguments, CommandDeclaration } from "./types.js";

/** Bound on the raw argument text of one command call. */
export const MAX_ARGUMENT_TEXT_BYTES = 64 * 1024;

const LEADING_TOKEN = /^\s*(\S+)/;

/**
 * Splits raw argument text the one way every face uses (C-3): each leading argument takes one
 * whitespace-separated token, the last takes the rest with outer whitespace trimmed and inner kept.
 * Absent arguments are left out of the result.
 */
export function splitArguments(specs: readonly ArgumentSpec[], raw: string): Record<string, string> {
  const values: Record<string, string> = {};
  let rest = raw;
  specs.forEach((spec, index) => {
    if (index === specs.length - 1) {
      const tail = rest.trim();
      if (tail.length > 0) values[spec.name] = tail;
      return;
    }
    const match = LEADING_TOKEN.exec(rest);
    if (match === null) return;
    values[spec.name] = match[1]!;
    rest = rest.slice(match[0].length);
  });
  return values;
}

/**
 * Turns a raw string or an argument object into checked named arguments for one command.
 * Throws AppError("invalid_params") for unknown or missing arguments, text for a command that takes
 * none, or non-string values; AppError("limit_exceeded") past MAX_ARGUMENT_TEXT_BYTES.
 */
export function resolveArguments(command: CommandDeclaration, input: unknown): CommandArguments {
  const values = typeof input === "string" || input === undefined || input === null
    ? fromText(command, input ?? "")
    : fromObject(command, input);
  const missing = command.arguments.filter((spec) => spec.required && values[spec.name] === undefined);
  if (missing.length > 0) {
    const names = missing.map((spec) => spec.name).join(", ");
    throw new AppError("invalid_params", `${command.name} needs ${names}: usage ${usage(command)}`);
  }
  return Object.freeze(values);
}

function fromText(command: CommandDeclaration, raw: string): Record<string, string> {
  const size = Buffer.byteLength(raw, "utf8");
  if (size > MAX_ARGUMENT_TEXT_BYTES) {
    throw new AppError("limit_exceeded", `argument text is ${size} bytes; the limit is MAX_ARGUMENT_TEXT_BYTES = ${MAX_ARGUMENT_TEXT_BYTES}`);
  }
  if (command.arguments.length === 0 && raw.trim().length > 0) {
    throw new AppError("invalid_params", `${command.name} takes no arguments, got "${raw.trim()}"`);
  }
  return splitArguments(command.arguments, raw);
}

function fromObject(command: CommandDeclaration, input: unknown): Record<string, string> {
  if (typeof input !== "object" || Array.isArray(input)) {
    throw new AppError("invalid_params", `${command.name} arguments must be a string or an object of strings`);
  }
  const known = new Set(command.arguments.map((spec) => spec.name));
  const values: Record<string, string> = {};
  let size = 0;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (!known.has(key)) throw new AppError("invalid_params", `${command.name} has no argument "${key}": usage ${usage(command)}`);
    if (value === undefined || value === null) continue;
    if (typeof value !== "string") throw new AppError("invalid_params", `argument "${key}" of ${command.name} must be a string`);
    size += Buffer.byteLength(value, "utf8");
    values[key] = value;
  }
  if (size > MAX_ARGUMENT_TEXT_BYTES) {
    throw new AppError("limit_exceeded", `arguments are ${size} bytes; the limit is MAX_ARGUMENT_TEXT_BYTES = ${MAX_ARGUMENT_TEXT_BYTES}`);
  }
  return values;
}

/** The usage line of a command, e.g. "/reload [target]". */
export function usage(command: CommandDeclaration): string {
  const parts = command.arguments.map((spec) => (spec.required ? `<${spec.name}>` : `[${spec.name}]`));
  return [command.name, ...parts].join(" ");
}
