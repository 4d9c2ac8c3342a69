export type { ArgumentSpec, Caller, CommandDeclaration } from "./types.js";
export { BUILTIN_COMMAND_NAMES, skillCommandName } from "./names.js";
export { BUILTIN_COMMANDS } from "./builtins.js";
export { MAX_ARGUMENT_TEXT_BYTES, resolveArguments, splitArguments, usage, type CommandArguments } from "./args.js";
export {
  buildCommandCatalog,
  completeCommand,
  findCommand,
  parseSlashLine,
  SKILL_ARGUMENTS,
  skillCommand,
  type CommandCatalog,
} from "./catalog.js";
