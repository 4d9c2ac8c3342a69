import type { CliCommand } from "./command.js";
import { chatCommand } from "./chat.js";
import { completionCommand } from "./completion.js";
import { consoleCommand } from "./console.js";
import { daemonStatus, daemonStop } from "./daemonCommands.js";
import { doctorCommand } from "./doctor.js";
import { execCommand } from "./exec.js";
import { MCP_COMMANDS } from "./mcpCommands.js";
import { MCP_SERVE_COMMANDS } from "./mcpServe.js";
import { kernelspecInstall, kernelspecList } from "./kernelspec.js";
import { serveCommand } from "./serve.js";
import { sessionsCommand } from "./sessions.js";
import { setupCommand } from "./setup.js";
import { skillsList, skillsPrompt, skillsValidate } from "./skills.js";
import { skillsRead, skillsResources } from "./skillsAccess.js";
import { webCommand } from "./web.js";
import { settingsGet, settingsSet, settingsUnset, skillsClear, skillsOff, skillsOn } from "./settingsCommands.js";

/** Every subcommand, in the order `albedo --help` lists them. */
export const COMMANDS: readonly CliCommand[] = [
  skillsList, skillsValidate, skillsPrompt, skillsRead, skillsResources, skillsOn, skillsOff, skillsClear,
  settingsGet, settingsSet, settingsUnset, ...MCP_COMMANDS, ...MCP_SERVE_COMMANDS,
  execCommand, chatCommand, consoleCommand, webCommand,
  serveCommand, daemonStatus, daemonStop, sessionsCommand, setupCommand, doctorCommand, kernelspecInstall, kernelspecList,
  completionCommand(() => COMMANDS),
];
