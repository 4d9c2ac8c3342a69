import { parseArgs as parseArgv } from "node:util";
import { didYouMean } from "../../text/index.js";

/** A declared command-line option. Flags take no value; others take exactly one. */
export interface OptionSpec {
  readonly name: string;
  readonly help: string;
  readonly value?: string;
  readonly short?: string;
}

export interface ParsedArgs {
  readonly positionals: readonly string[];
  readonly options: ReadonlyMap<string, string | true>;
}

/** Bad command-line input; the CLI prints its message with the command's usage line and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A command that cannot go on for a reason the user can fix (a missing file); the CLI prints the message alone and exits with `exitCode`. */
export class CliFailure extends Error {
  override readonly name = "CliFailure";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * Parses argv against declared options with node's parseArgs, under the CLI's own messages: an
 * unknown option names the closest declared one, a flag given a value and an option missing its
 * value say so (UsageError). At positional index `dashedValueAt` (a VALUE after its KEY, as
 * `settings set kernel.pool -3`) an argument that starts with `-` but names no declared option is
 * that positional.
 */
export function parseArgs(argv: readonly string[], specs: readonly OptionSpec[], dashedValueAt?: number): ParsedArgs {
  const declared = Object.fromEntries(specs.map((spec) => [spec.name, { type: spec.value === undefined ? "boolean" as const : "string" as const, ...(spec.short ? { short: spec.short } : {}) }]));
  const { tokens } = parseArgv({ args: [...argv], options: declared, allowPositionals: true, strict: false, tokens: true });
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  let taken = -1;
  for (const token of tokens) {
    // A group of short letters ("-3x") is one argument: the first of its tokens decides it.
    if (token.index === taken) continue;
    taken = token.index;
    if (token.kind === "positional") positionals.push(token.value);
    else if (token.kind === "option") {
      const spec = byName.get(token.name);
      const arg = argv[token.index]!;
      if (spec === undefined || (token.rawName.startsWith("-") && !token.rawName.startsWith("--") && arg.length !== 2)) {
        if (positionals.length === dashedValueAt) positionals.push(arg);
        else throw new UsageError(`unknown option ${arg}${didYouMean(arg, specs.map((s) => `--${s.name}`))}`);
      } else if (spec.value === undefined) {
        if (token.inlineValue) throw new UsageError(`--${spec.name} takes no value`);
        options.set(spec.name, true);
      } else {
        if (token.value === undefined) throw new UsageError(`--${spec.name} needs a value (${spec.value})`);
        options.set(spec.name, token.value);
      }
    } else {
      positionals.push(...argv.slice(token.index + 1));
      break;
    }
  }
  return { positionals, options };
}

/** Reads a non-negative integer option, or the fallback when absent. */
export function intOption(args: ParsedArgs, name: string, fallback: number): number {
  const raw = args.options.get(name);
  if (raw === undefined) return fallback;
  if (raw === true || !/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a non-negative integer, got ${String(raw)}`);
  return Number(raw);
}

/** Reads a string option, or undefined when absent. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const raw = args.options.get(name);
  return typeof raw === "string" ? raw : undefined;
}
