import { findCommand, resolveArguments, usage, type Caller, type CommandArguments, type CommandDeclaration } from "../commands/index.js";
import { AppError } from "../errors/index.js";
import { findSkill } from "../skills/index.js";
import type { SkillAccess } from "./skillAccess.js";
import type { SessionView } from "./view.js";

/** What a built-in command needs from its session; the session implements it. */
export interface CommandHost {
  reload(): Promise<unknown>;
  status(): unknown;
  modelInfo(): unknown;
}

/**
 * Runs one command against one view (C-4, C-5). A skill command returns its activation payload and
 * submits no turn here; turns are the daemon's business. Throws AppError for an unknown command,
 * a caller the command does not admit, or bad arguments.
 */
export async function runCommand(view: SessionView, host: CommandHost, name: string, input: unknown, caller: Caller, access: SkillAccess): Promise<unknown> {
  const command = findCommand(view.commands, name);
  if (command === undefined) throw new AppError("not_found", `no command ${name} in this session; see /help`);
  if (!command.callers.includes(caller)) {
    throw new AppError("forbidden", `${command.name} can be called by ${command.callers.join(" or ")}, not by the ${caller}`);
  }
  const args = resolveArguments(command, input);
  if (command.skill !== undefined) return activate(view, command.skill, args, access);
  return runBuiltin(view, host, command, args);
}

async function activate(view: SessionView, skill: string, args: CommandArguments, access: SkillAccess): Promise<unknown> {
  const entry = findSkill(view.snapshot, skill);
  if (entry === undefined) throw new AppError("not_found", `skill ${skill} is not in this session's catalog`);
  return access.activate(entry, args.arguments ?? "");
}

async function runBuiltin(view: SessionView, host: CommandHost, command: CommandDeclaration, args: CommandArguments): Promise<unknown> {
  switch (command.name) {
    case "/help":
      return help(view, args.command);
    case "/reload": {
      const target = args.target ?? "session";
      if (target !== "session") throw new AppError("invalid_params", `/reload knows the target "session", not "${target}"`);
      return host.reload();
    }
    case "/model":
      return host.modelInfo();
    case "/skills":
      return {
        revision: view.snapshot.revision,
        skills: view.snapshot.skills.map(({ name, description, source, command: slash, scope }) => ({ name, description, source, command: slash, scope })),
        diagnostics: view.snapshot.diagnostics,
      };
    case "/status":
      return host.status();
    default:
      throw new Error(`built-in ${command.name} is declared but has no implementation`);
  }
}

function help(view: SessionView, name: string | undefined): unknown {
  if (name === undefined) {
    return { commands: view.commands.commands.map((command) => ({ usage: usage(command), description: command.description })) };
  }
  const command = findCommand(view.commands, name);
  if (command === undefined) throw new AppError("not_found", `no command ${name} in this session`);
  return { usage: usage(command), description: command.description, arguments: command.arguments, callers: command.callers };
}
