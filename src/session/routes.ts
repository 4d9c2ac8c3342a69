import { AppError } from "../errors/index.js";
import { RouteTable, type RouteHandler } from "../rpc/index.js";
import { completeSlash, declarationOf, describeResult, findCommand, parseSlashLine, skillCommandName, unknownCommand } from "../commands/index.js";
import { findSkill, type SkillEntry } from "../skills/index.js";
import { commandContext, invokeCommand, prepareCommand, type CommandHost } from "./commands.js";
import type { SkillAccess } from "./skillAccess.js";
import { onlyParams, optionalInt, optionalString, stringParam } from "./params.js";
import type { SessionView } from "./view.js";

/** Reload can walk up to MAX_CANDIDATES skill trees; it gets longer than an ordinary call. */
export const RELOAD_ROUTE_TIMEOUT_MS = 60_000;

/**
 * The methods a session serves its kernel (K-5): `commands.*` always, `skills.*` with the skills
 * extension. `commands.slash` and `commands.complete` serve a person typing `/name args` in a
 * notebook: the runtime parses, runs and renders the line, so the kernel package keeps no copy
 * of that logic.
 */
export const COMMAND_METHODS = ["commands.catalog", "commands.invoke", "commands.slash", "commands.complete"] as const;
export const SKILL_METHODS = ["skills.list", "skills.read", "skills.resources"] as const;

function skillOf(view: SessionView, params: Readonly<Record<string, unknown>>, method: string): SkillEntry {
  const name = stringParam(params, "name", method);
  const entry = findSkill(view.snapshot, name);
  if (entry === undefined) throw new AppError("not_found", `no skill named "${name}" in this session's catalog`);
  return entry;
}

function skillRoutes(view: SessionView, access: SkillAccess): Record<(typeof SKILL_METHODS)[number], RouteHandler> {
  return {
    "skills.list": async (params) => {
      onlyParams(params, [], "skills.list");
      return {
        revision: view.snapshot.revision,
        skills: view.snapshot.skills.map(({ name, description, source }) => ({ name, description, source, command: skillCommandName(name) })),
      };
    },
    // Not async: a page it has at once is sent at once, never pending (see RouteHandler).
    "skills.read": (params, context) => {
      onlyParams(params, ["name", "resource", "offset", "limit"], "skills.read");
      const entry = skillOf(view, params, "skills.read");
      const resource = optionalString(params, "resource", "skills.read");
      const [offset, limit] = [optionalInt(params, "offset", "skills.read"), optionalInt(params, "limit", "skills.read")];
      return access.read(entry, resource, offset, limit, context.arrival);
    },
    "skills.resources": async (params) => {
      onlyParams(params, ["name"], "skills.resources");
      return access.resources(skillOf(view, params, "skills.resources"));
    },
  };
}

/**
 * The route table of one view (K-5): `commands.*` always, `skills.*` only while the skills
 * extension is on (K-8). Every handler reads the view it was built with, never a newer one (K-7).
 * `access` is the session's, with its sandbox's guard bound in.
 */
export function buildRoutes(view: SessionView, host: CommandHost, access: SkillAccess): RouteTable {
  const context = commandContext(view, host, access.forKernel());
  const commandRoutes: Record<(typeof COMMAND_METHODS)[number], RouteHandler> = {
    "commands.catalog": async (params) => {
      onlyParams(params, [], "commands.catalog");
      return { revision: view.commands.revision, commands: view.commands.commands.map(declarationOf) };
    },
    "commands.invoke": async (params) => {
      onlyParams(params, ["name", "arguments"], "commands.invoke");
      return invokeCommand(context, stringParam(params, "name", "commands.invoke"), params.arguments, "model");
    },
    "commands.slash": async (params) => {
      onlyParams(params, ["line"], "commands.slash");
      const line = stringParam(params, "line", "commands.slash");
      const parsed = parseSlashLine(line);
      if (parsed === undefined) throw new AppError("invalid_params", "commands.slash takes a line that starts with a slash command, such as /help");
      const prepared = prepareCommand(context, parsed.name, parsed.text, "model");
      if (prepared === undefined) throw unknownCommand(parsed.name, view.commands.commands.map((c) => c.name));
      const value = await prepared.run();
      const text = describeResult(findCommand(view.commands, prepared.command.name), value);
      return { command: prepared.command.name, submits_turn: prepared.command.submitsTurn, value, text };
    },
    "commands.complete": async (params) => {
      onlyParams(params, ["line"], "commands.complete");
      return { matches: completeSlash(view.commands.commands, stringParam(params, "line", "commands.complete")) };
    },
  };
  return RouteTable.of({
    ...(view.extensions.skills ? skillRoutes(view, access) : {}),
    ...commandRoutes,
    "commands.invoke": { handler: commandRoutes["commands.invoke"], timeoutMs: RELOAD_ROUTE_TIMEOUT_MS },
    "commands.slash": { handler: commandRoutes["commands.slash"], timeoutMs: RELOAD_ROUTE_TIMEOUT_MS },
  });
}
