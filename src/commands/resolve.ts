import { AppError } from "../errors/index.js";
import { didYouMean } from "../text/index.js";
import { resolveArguments } from "./args.js";
import type { Caller, Command, CommandArguments, CommandCatalog } from "./types.js";

/** A command found for one caller, with its arguments split and checked: ready to run. */
export interface CommandCall {
  readonly command: Command;
  readonly args: CommandArguments;
}

/** Finds a command by slash name; a leading slash is optional. Absent is undefined. */
export function findCommand(catalog: CommandCatalog, name: string): Command | undefined {
  const slash = name.startsWith("/") ? name : `/${name}`;
  return catalog.commands.find((command) => command.name === slash);
}

/**
 * The one way a name and its input become a call, whatever the face (C-1, C-3): finds the command,
 * checks that `caller` may call it, and splits the input into named arguments. Undefined when the
 * catalog has no such command; throws AppError "forbidden" for a caller the command does not
 * admit, and whatever resolveArguments throws.
 */
export function resolveCall(catalog: CommandCatalog, name: string, input: unknown, caller: Caller): CommandCall | undefined {
  const command = findCommand(catalog, name);
  if (command === undefined) return undefined;
  if (!command.callers.includes(caller)) {
    throw new AppError("forbidden", `${command.name} can be called by ${command.callers.join(" or ")}, not by the ${caller}`);
  }
  return { command, args: resolveArguments(command, input) };
}

/** The error for a name no command of the session has, naming the close ones among `known` when there are. */
export function unknownCommand(name: string, known: readonly string[] = []): AppError {
  return new AppError("not_found", `no command ${name} in this session${didYouMean(name, known, "; see /help")}`, { command: name });
}

/** Splits a typed line "/name rest" into the command name and its raw argument text; undefined for a line that is no command. */
export function parseSlashLine(line: string): { name: string; text: string } | undefined {
  const match = /^\s*(\/\S+)(?:\s+([\s\S]*))?$/.exec(line);
  return match ? { name: match[1]!, text: match[2] ?? "" } : undefined;
}

/** Completions for a partly typed slash command, for menus and autocomplete. */
export function completeCommand(catalog: { readonly commands: readonly { readonly name: string }[] }, prefix: string): string[] {
  return catalog.commands.map((command) => command.name).filter((name) => name.startsWith(prefix));
}

/** What slash completion needs of a command: its name and its arguments' choices. */
export interface CompletableCommand {
  readonly name: string;
  readonly arguments?: readonly { readonly name: string; readonly choices?: readonly string[] }[];
}

/**
 * Completions of a typed slash line, as whole lines: the command's name while it is being typed,
 * then its first argument (`/reload s` → `/reload session`): /help's is any command name, another
 * command's its declared choices. Nothing past the first argument.
 */
export function completeSlash(commands: readonly CompletableCommand[], line: string): string[] {
  const match = /^(\/\S*)(\s+)(\S*)$/.exec(line);
  if (match === null) return /\s/.test(line) ? [] : completeCommand({ commands }, line);
  const [, name, gap, partial] = match;
  const command = commands.find((c) => c.name === name);
  const choices = name === "/help" ? commands.map((c) => c.name) : (command?.arguments?.[0]?.choices ?? []);
  return choices.filter((choice) => choice.startsWith(partial!)).map((choice) => `${name}${gap}${choice}`);
}
