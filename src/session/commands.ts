import { resolveCall, unknownCommand, type Caller, type CommandContext } from "../commands/index.js";
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

/** Runs one command (C-4, C-5); rejects with AppError not_found for an unknown name, and with whatever resolving or running throws. */
export async function invokeCommand(context: CommandContext, name: string, input: unknown, caller: Caller): Promise<unknown> {
  const prepared = prepareCommand(context, name, input, caller);
  if (prepared === undefined) throw unknownCommand(name, context.commands.commands.map((c) => c.name));
  return prepared.run();
}

/** The session's commands, resolved against the view current at each call, with its guarded skill access. */
export class CommandSet implements SessionCommands {
  constructor(private readonly currentView: () => SessionView, private readonly host: CommandHost, private readonly access: SkillAccess) {}

  prepare(name: string, input: unknown, caller: Caller = "user"): PreparedCommand | undefined {
    return prepareCommand(this.context(), name, input, caller);
  }

  invoke(name: string, input: unknown, caller: Caller = "user"): Promise<unknown> {
    return invokeCommand(this.context(), name, input, caller);
  }

  private context(): CommandContext {
    return commandContext(this.currentView(), this.host, this.access);
  }
}
