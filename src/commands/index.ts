/** The commands domain's public surface: declarations, the catalog of a snapshot, and the one resolver every face uses. */
export type { Caller, Command, CommandCatalog, CommandContext, CommandDeclaration } from "./types.js";
export { skillCommandName } from "./names.js";
export { BUILTIN_COMMANDS } from "./builtins.js";
export { MAX_ARGUMENT_TEXT_BYTES, resolveArguments, splitArguments } from "./args.js";
export { buildCommandCatalog, declarationOf } from "./catalog.js";
export { completeCommand, completeSlash, findCommand, parseSlashLine, resolveCall, unknownCommand } from "./resolve.js";
export { describeResult } from "./text.js";
