import type { CommandDeclaration } from "./types.js";

/**
 * The built-in session commands (C-2). Each is declared once here; the menu, user invocation and the
 * Python bindings all read these declarations. Built-ins always win over skills of the same name.
 */
export const BUILTIN_COMMANDS: readonly CommandDeclaration[] = Object.freeze([
  {
    name: "/help",
    description: "Show the session's commands, or one command's arguments.",
    arguments: [{ name: "command", help: "a command name such as /reload", required: false }],
    callers: ["user", "model"],
    submitsTurn: false,
  },
  {
    name: "/reload",
    description: "Re-run skill discovery and swap the session's catalog without restarting the kernel.",
    arguments: [{ name: "target", help: "what to reload: session (the default)", required: false }],
    callers: ["user", "model"],
    submitsTurn: false,
  },
  {
    name: "/model",
    description: "Show the model adapter this session's turns use.",
    arguments: [],
    callers: ["user"],
    submitsTurn: false,
  },
  {
    name: "/skills",
    description: "List the skills in the session's catalog with their commands and diagnostics.",
    arguments: [],
    callers: ["user", "model"],
    submitsTurn: false,
  },
  {
    name: "/status",
    description: "Show the session: kernel state, sandbox, catalog revision, skill count and extensions.",
    arguments: [],
    callers: ["user", "model"],
    submitsTurn: false,
  },
]);
