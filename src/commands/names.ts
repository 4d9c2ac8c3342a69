import { BUILTIN_COMMANDS } from "./builtins.js";

/** Built-in command names without the slash; built-ins always win over skills (C-2). */
export const BUILTIN_COMMAND_NAMES: readonly string[] = Object.freeze(BUILTIN_COMMANDS.map((command) => command.name.slice(1)));

const BUILTINS = new Set(BUILTIN_COMMAND_NAMES);

/**
 * The slash command for a skill (C-2): `/<name>`, or `/skill:<name>` when a built-in has that name.
 * It depends on the name alone, so a skill keeps its command across reloads and sessions.
 */
export function skillCommandName(skillName: string): string {
  return BUILTINS.has(skillName) ? `/skill:${skillName}` : `/${skillName}`;
}
