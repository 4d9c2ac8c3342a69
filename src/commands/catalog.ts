import type { CatalogSnapshot, SkillEntry } from "../skills/index.js";
import { BUILTIN_COMMANDS } from "./builtins.js";
import { skillCommandName } from "./names.js";
import { activationText } from "./text.js";
import type { Command, CommandCatalog, CommandDeclaration } from "./types.js";

/** The argument every skill command takes: free text handed to the skill with its instructions. */
export const SKILL_ARGUMENTS = Object.freeze([
  Object.freeze({ name: "arguments", help: "what to do with the skill; passed on verbatim", required: false }),
]);

const SKILL_CALLERS = Object.freeze(["user", "model"] as const);

/** The command of one skill (C-1, C-2): running it prepares the skill's activation (C-5). */
export function skillCommand(entry: SkillEntry): Command {
  const skill = entry.name;
  return Object.freeze({
    name: skillCommandName(skill),
    description: entry.description,
    arguments: SKILL_ARGUMENTS,
    callers: SKILL_CALLERS,
    submitsTurn: true,
    skill,
    run: (context, args) => context.activate(skill, args.arguments ?? ""),
    text: activationText,
  } satisfies Command);
}

/** Builds the command catalog of a snapshot; `skills: false` leaves skill commands out (K-8). */
export function buildCommandCatalog(snapshot: CatalogSnapshot, options: { skills: boolean } = { skills: true }): CommandCatalog {
  const skillCommands = options.skills ? snapshot.skills.map(skillCommand) : [];
  return Object.freeze({ revision: snapshot.revision, commands: Object.freeze([...BUILTIN_COMMANDS, ...skillCommands]) });
}

/** A command's declaration alone, as it crosses the wire (RPC catalog, HTTP). */
export function declarationOf(command: CommandDeclaration): CommandDeclaration {
  const { name, description, arguments: args, callers, submitsTurn, skill } = command;
  return { name, description, arguments: args, callers, submitsTurn, ...(skill === undefined ? {} : { skill }) };
}
