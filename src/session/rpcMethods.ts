import { AppError } from "../errors/index.js";
import { RouteTable, route } from "../rpc/index.js";
import { completeSlash, declarationOf, describeResult, findCommand, parseSlashLine, skillCommandName } from "../commands/index.js";
import { commandContext, commandNotFound, invokeCommand, prepareCommand, type CommandHost } from "./commands.js";
import { COMMAND_METHODS, SKILL_METHODS } from "./rpcApi.js";
import { requireSkill, type SkillAccess } from "./skillAccess.js";
import type { SessionView } from "./view.js";
import { mcpRoutes, type McpCallObserver, type McpProgressNotice } from "./mcpMethods.js";
import type { SessionMcp } from "./mcp.js";

function skillRoutes(view: SessionView, access: SkillAccess) {
  return [
    route(SKILL_METHODS.list, async () => ({
      revision: view.snapshot.revision,
      skills: view.snapshot.skills.map(({ name, description, source }) => ({ name, description, source, command: skillCommandName(name) })),
    })),
    // Not async: a page it has at once is sent at once, never pending (see RouteHandler).
    route(SKILL_METHODS.read, ({ name, resource, offset, limit }, context) => access.read(requireSkill(view, name), resource, offset, limit, context.arrival)),
    route(SKILL_METHODS.resources, async ({ name }) => access.resources(requireSkill(view, name))),
  ];
}

function commandRoutes(view: SessionView, host: CommandHost, access: SkillAccess) {
  const context = commandContext(view, host, access.forKernel());
  return [
    route(COMMAND_METHODS.catalog, async () => ({ revision: view.commands.revision, commands: view.commands.commands.map(declarationOf) })),
    route(COMMAND_METHODS.invoke, ({ name, arguments: input }) => invokeCommand(view, context, name, input, "model")),
    route(COMMAND_METHODS.slash, async ({ line }) => {
      const parsed = parseSlashLine(line);
      if (parsed === undefined) throw new AppError("invalid_params", "commands.slash takes a line that starts with a slash command, such as /help");
      const prepared = prepareCommand(context, parsed.name, parsed.text, "model");
      if (prepared === undefined) throw commandNotFound(view, parsed.name);
      const value = await prepared.run();
      const text = describeResult(findCommand(view.commands, prepared.command.name), value);
      return { command: prepared.command.name, submits_turn: prepared.command.submitsTurn, value, text };
    }),
    route(COMMAND_METHODS.complete, async ({ line }) => ({ matches: completeSlash(view.commands.commands, line) })),
  ];
}

/**
 * The route table of one view (K-5): the `commands.*` methods always, the `skills.*` ones only
 * while the skills extension is on (K-8), the `mcp.*` ones only in a session with MCP servers
 * (M-3). Every handler reads the view it was built with, never a newer one (K-7). `access` is the
 * session's, with its sandbox's or remote guard bound in.
 */
export function buildRoutes(
  view: SessionView, host: CommandHost, access: SkillAccess,
  mcp?: { readonly servers: SessionMcp; readonly observers: ReadonlySet<McpCallObserver>; readonly progress: (notice: McpProgressNotice) => void },
): RouteTable {
  return RouteTable.declared([
    ...(view.extensions.skills ? skillRoutes(view, access) : []),
    ...commandRoutes(view, host, access),
    ...(mcp ? mcpRoutes(mcp.servers, mcp.observers, mcp.progress) : []),
  ]);
}
