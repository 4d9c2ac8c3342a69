import { AppError } from "../errors/index.js";
import { usage } from "./args.js";
import { findCommand } from "./resolve.js";
import { helpText, modelText, reloadText, skillsText, statusText } from "./text.js";
import type { Command } from "./types.js";

const help: Command = {
  name: "/help",
  text: helpText,
  description: "Show the session's commands, or one command's arguments.",
  arguments: [{ name: "command", help: "a command name such as /reload", required: false }],
  callers: ["user", "model"],
  submitsTurn: false,
  async run(context, args) {
    if (args.command === undefined) {
      return { commands: context.commands.commands.map((command) => ({ usage: usage(command), description: command.description })) };
    }
    const command = findCommand(context.commands, args.command);
    if (command === undefined) throw new AppError("not_found", `no command ${args.command} in this session`);
    return { usage: usage(command), description: command.description, arguments: command.arguments, callers: command.callers };
  },
};

const reload: Command = {
  name: "/reload",
  text: reloadText,
  description: "Re-run skill discovery and swap the session's catalog without restarting the kernel.",
  arguments: [{ name: "target", help: "what to reload: session (the default)", required: false, choices: ["session"] }],
  callers: ["user", "model"],
  submitsTurn: false,
  async run(context, args) {
    const target = args.target ?? "session";
    if (target !== "session") throw new AppError("invalid_params", `/reload knows the target "session", not "${target}"`);
    return context.reload();
  },
};

const model: Command = {
  name: "/model",
  text: modelText,
  description: "Show the model adapter this session's turns use.",
  arguments: [],
  callers: ["user"],
  submitsTurn: false,
  async run(context) {
    return context.modelInfo();
  },
};

const skills: Command = {
  name: "/skills",
  text: skillsText,
  description: "List the skills in the session's catalog with their commands and diagnostics.",
  arguments: [],
  callers: ["user", "model"],
  submitsTurn: false,
  async run(context) {
    // Each skill's command as the catalog named it (C-2), so this list and /help agree.
    const commandOf = new Map(context.commands.commands.flatMap((command) => (command.skill === undefined ? [] : [[command.skill, command.name] as const])));
    return {
      revision: context.skills.revision,
      skills: context.skills.skills.map(({ name, description, source, scope }) => ({ name, description, source, command: commandOf.get(name) ?? null, scope })),
      diagnostics: context.skills.diagnostics,
    };
  },
};

const status: Command = {
  name: "/status",
  text: statusText,
  description: "Show the session: kernel state, sandbox, catalog revision, skill count and extensions.",
  arguments: [],
  callers: ["user", "model"],
  submitsTurn: false,
  async run(context) {
    return context.status();
  },
};

/**
 * The built-in session commands (C-2), each one object holding its declaration and its behaviour:
 * adding a built-in is adding one object here. The menu, user invocation and the Python bindings
 * all read these; built-ins always win over skills of the same name.
 */
export const BUILTIN_COMMANDS: readonly Command[] = Object.freeze([help, reload, model, skills, status].map(freezeCommand));

function freezeCommand(command: Command): Command {
  for (const spec of command.arguments) Object.freeze(Object.freeze(spec).choices);
  Object.freeze(command.arguments);
  Object.freeze(command.callers);
  return Object.freeze(command);
}
