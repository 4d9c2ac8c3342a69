import type { CliCommand } from "./command.js";

/** Every subcommand, in the order `albedo --help` lists them. */
export const COMMANDS: readonly CliCommand[] = [];
