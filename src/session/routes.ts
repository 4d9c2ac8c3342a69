import { AppError } from "../errors/index.js";
import { RouteTable, type RouteHandler } from "../rpc/index.js";
import { declarationOf, skillCommandName } from "../commands/index.js";
import { findSkill, type SkillEntry } from "../skills/index.js";
import { commandContext, invokeCommand, type CommandHost } from "./commands.js";
import type { SkillAccess } from "./skillAccess.js";
import { onlyParams, optionalInt, optionalString, stringParam } from "./params.js";
import type { SessionView } from "./view.js";

/** Reload can walk up to MAX_CANDIDATES skill trees; it gets longer than an ordinary call. */
export const RELOAD_ROUTE_TIMEOUT_MS = 60_000;

/** The methods a session serves its kernel (K-5): `commands.*` always, `skills.*` with the skills extension. */
export const COMMAND_METHODS = ["commands.catalog", "commands.invoke"] as const;
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
    "skills.read": async (params) => {
      onlyParams(params, ["name", "resource", "offset", "limit"], "skills.read");
      const entry = skillOf(view, params, "skills.read");
      const resource = optionalString(params, "resource", "skills.read");
      return access.read(entry, resource, optionalInt(params, "offset", "skills.read"), optionalInt(params, "limit", "skills.read"));
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
  };
  return RouteTable.of({
    ...(view.extensions.skills ? skillRoutes(view, access) : {}),
    ...commandRoutes,
    "commands.invoke": { handler: commandRoutes["commands.invoke"], timeoutMs: RELOAD_ROUTE_TIMEOUT_MS },
  });
}
