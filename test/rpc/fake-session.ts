import { AppError } from "../../src/errors/index.js";
import type { CommandDeclaration } from "../../src/commands/types.js";
import { type CallContext, RouteTable } from "../../src/rpc/index.js";

/** A command declaration with defaults for the fields a test does not care about. */
export function declaration(name: string, extra: Partial<CommandDeclaration> = {}): CommandDeclaration {
  return { name, description: `Runs ${name}.`, arguments: [], callers: ["user", "model"], submitsTurn: false, ...extra };
}

export interface FakeCall {
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly context: CallContext;
}

/**
 * Routes standing in for a session: `commands.invoke` answers for declared commands and
 * `/reload` swaps to `next` through `swap` (K-7), like the real session will; the command named
 * `never` waits until its call is aborted.
 */
export function fakeRoutes(
  commands: readonly CommandDeclaration[],
  calls: FakeCall[],
  options: { swap?: (table: RouteTable) => void; next?: () => RouteTable; revision?: string; never?: string } = {},
): RouteTable {
  const record = (method: string) => async (params: Readonly<Record<string, unknown>>, context: CallContext) => {
    calls.push({ method, params, context });
    return { method, params, revision: options.revision ?? "A" };
  };
  return RouteTable.of({
    "skills.list": record("skills.list"),
    "skills.read": record("skills.read"),
    "skills.resources": record("skills.resources"),
    "commands.catalog": async (params, context) => {
      calls.push({ method: "commands.catalog", params, context });
      return { commands };
    },
    "commands.invoke": async (params, context) => {
      calls.push({ method: "commands.invoke", params, context });
      if (params.name === "/reload" && options.swap && options.next) {
        options.swap(options.next());
        return { reloaded: true };
      }
      if (params.name === options.never) {
        return new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason)));
      }
      if (!commands.some((c) => c.name === params.name)) {
        throw new AppError("not_found", `no command ${String(params.name)} in this session`, { name: params.name });
      }
      return { invoked: params.name, arguments: params.arguments, revision: options.revision ?? "A" };
    },
  });
}
