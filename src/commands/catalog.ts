import type { CatalogSnapshot, SkillEntry } from "../skills/types.js";
import { BUILTIN_COMMANDS } from "./builtins.js";
import type { CommandDeclaration } from "./types.js";

/** The argument every skill command takes: free text handed to the skill with its instructions. */
export const SKILL_ARGUMENTS = Object.freeze([
  Object.freeze({ name: "arguments", help: "what to do with the skill; passed on verbatim", required: false }),
]);

/** The commands of one catalog snapshot: built-ins first, then skills by name. Immutable. */
export interface CommandCatalog {
  readonly revision: string;
  readonly commands: readonly CommandDeclaration[];
}

/** The declaration of one skill's command (C-1, C-2). */
export function skillCommand(entry: SkillEntry): CommandDeclaration {
  return Object.freeze({
    name: entry.command,
    description: entry.description,
    arguments: SKILL_ARGUMENTS,
    callers: Object.freeze(["user", "model"] as const),
    submitsTurn: true,
    skill: entry.name,
  });
}

/** Builds the command catalog of a snapshot; `skills: false` leaves skill commands out (K-8). */
export function buildCommandCatalog(snapshot: CatalogSnapshot, options: { skills: boolean } = { skills: true }): CommandCatalog {
  const skillCommands = options.skills ? snapshot.skills.map(skillCommand) : [];
  return Object.freeze({ revision: snapshot.revision, commands: Object.freeze([...BUILTIN_COMMANDS, ...skillCommands]) });
}

/** Finds a command by slash name; a leading slash is optional. Absent is undefined. */
export function findCommand(catalog: CommandCatalog, name: string): CommandDeclaration | undefined {
  const slash = name.startsWith("/") ? name : `/${name}`;
  return catalog.commands.find((command) => command.name === slash);
}

/** Splits a typed line "/name rest" into the command name and its raw argument text. */
export function parseSlashLine(line: string): { name: string; text: string } | undefined {
  const match = /^\s*(\/\S+)(?:\s+([\s\S]*))?$/.exec(line);
  return match ? { name: match[1]!, text: match[2] ?? "" } : undefined;
}

/** Completions for a partly typed slash command, for menus and autocomplete. */
export function completeCommand(catalog: { readonly commands: readonly { readonly name: string }[] }, prefix: string): string[] {
  return catalog.commands.map((command) => command.name).filter((name) => name.startsWith(prefix));
}
