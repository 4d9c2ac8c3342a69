import { AppError } from "../errors/index.js";
import { resolveCall, skillCommandName, unknownCommand, type Caller, type CommandContext } from "../commands/index.js";
import { requireSkill, type SkillAccess } from "./skillAccess.js";
import type { PreparedCommand, SessionCommands, SessionPort } from "./port.js";
import type { SessionView } from "./view.js";

/** What built-in commands need from their session beyond one view: a view of its port. */
export type CommandHost = Pick<SessionPort, "reload" | "status" | "usage">;

/**
 * The context the commands of `view` run in. Skill activation goes through the session's `access`,
 * which carries the sandbox's path guard, so no command can reach a skill file the guard hides.
 */
export function commandContext(view: SessionView, host: CommandHost, access: SkillAccess): CommandContext {
  return {
    commands: view.commands,
    skills: view.snapshot,
    reload: () => host.reload(),
    status: () => host.status(),
    modelInfo: () => host.usage.model(),
    activate: async (skill, text) => access.activate(requireSkill(view, skill), text),
  };
}

/**
 * Resolves `name` and its input for `caller` in the context's catalog (see resolveCall) and binds
 * the call to the context. Undefined for an unknown command; throws what resolveCall throws.
 */
export function prepareCommand(context: CommandContext, name: string, input: unknown, caller: Caller): PreparedCommand | undefined {
  const call = resolveCall(context.commands, name, input, caller);
  if (call === undefined) return undefined;
  return { command: call.command, run: () => call.command.run(context, call.args) };
}

/** Runs one command (C-4, C-5) of `view`; rejects with AppError not_found for an unknown name (see commandNotFound), and with whatever resolving or running throws. */
export async function invokeCommand(view: SessionView, context: CommandContext, name: string, input: unknown, caller: Caller): Promise<unknown> {
  const prepared = prepareCommand(context, name, input, caller);
  if (prepared === undefined) throw commandNotFound(view, name);
  return prepared.run();
}

/** Where a skill that is off was switched off, and how to turn it back on, by the scope that decided. */
const OFF_BY: Readonly<Record<string, (skill: string) => string>> = {
  session: () => "off for this session (switched off for it alone; its session switch in the web console's Skills panel turns it back on)",
  project: (skill) => `off in this project's settings (.albedo/settings.json); \`albedo skills on ${skill} --project\` or \`albedo skills clear ${skill} --project\` turns it back on`,
  global: (skill) => `off in the global settings; \`albedo skills on ${skill}\` turns it back on`,
  default: (skill) => `off by default (the global skills.default is off); \`albedo skills on ${skill}\` turns it on`,
};

/**
 * The error for a slash name no command of `view` has. When it names a skill of the workspace that
 * is switched off, it says so and where (the scope that decided), instead of "no command".
 */
export function commandNotFound(view: SessionView, name: string): AppError {
  const skill = view.discovered.skills.find((entry) => skillCommandName(entry.name) === name);
  const enablement = skill === undefined ? undefined : view.effective[skill.name];
  if (skill === undefined || enablement === undefined || enablement.enabled) return unknownCommand(name, view.commands.commands.map((c) => c.name));
  const off = OFF_BY[enablement.decidedBy] ?? OFF_BY.default!;
  return new AppError("not_found", `${name} is the skill ${skill.name}, which is ${off(skill.name)}`, { command: name, skill: skill.name, decided_by: enablement.decidedBy });
}

/** The session's commands, resolved against the view current at each call, with its guarded skill access. */
export class CommandSet implements SessionCommands {
  constructor(private readonly currentView: () => SessionView, private readonly host: CommandHost, private readonly access: SkillAccess) {}

  prepare(name: string, input: unknown, caller: Caller = "user"): PreparedCommand | undefined {
    return prepareCommand(this.context(), name, input, caller);
  }

  invoke(name: string, input: unknown, caller: Caller = "user"): Promise<unknown> {
    return invokeCommand(this.currentView(), this.context(), name, input, caller);
  }

  notFound(name: string): AppError {
    return commandNotFound(this.currentView(), name);
  }

  private context(): CommandContext {
    return commandContext(this.currentView(), this.host, this.access);
  }
}
