import { didYouMean } from "../text/index.js";

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
 * Parses argv against declared options; throws UsageError on unknown or incomplete options. At
 * positional index `dashedValueAt` (a VALUE after its KEY, as `settings set kernel.pool -3`) an
 * argument that starts with `-` but names no declared option is that positional.
 */
export function parseArgs(argv: readonly string[], specs: readonly OptionSpec[], dashedValueAt?: number): ParsedArgs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const byShort = new Map(specs.filter((s) => s.short).map((spec) => [spec.short!, spec]));
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    const spec = arg.startsWith("--")
      ? byName.get(arg.slice(2).split("=")[0]!)
      : arg.length === 2 && arg.startsWith("-") ? byShort.get(arg.slice(1)) : undefined;
    if (spec === undefined) {
      if (arg.startsWith("-") && arg !== "-" && positionals.length !== dashedValueAt) throw new UsageError(`unknown option ${arg}${didYouMean(arg, specs.map((s) => `--${s.name}`))}`);
      positionals.push(arg);
      continue;
    }
    if (spec.value === undefined) {
      if (arg.includes("=")) throw new UsageError(`--${spec.name} takes no value`);
      options.set(spec.name, true);
      continue;
    }
    const inline = arg.startsWith("--") && arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : undefined;
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${spec.name} needs a value (${spec.value})`);
    options.set(spec.name, value);
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
