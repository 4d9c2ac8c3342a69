import type { ParamsSchema } from "./methods.js";

/** What a handler learns about the call it serves. */
export interface CallContext {
  readonly method: string;
  /** The Jupyter parent msg_id of the cell that made the call, when the kernel sent one. */
  readonly cell: string | undefined;
  /** Aborted when the call times out, its cell is cancelled, the kernel dies or the server closes. */
  readonly signal: AbortSignal;
  /**
   * The same object for calls that reached the runtime together, a new one for each arrival. Every
   * call of an arrival was in the runtime's hands before any of them started, so whatever the kernel
   * did before sending one of them happened before the first handler ran: a check of the disk made
   * while serving one of them holds for all of them, and a handler may share it by this key.
   */
  readonly arrival: object;
}

/**
 * Serves one method. Params are untrusted JSON unless the route declares their schema (then they
 * are what it parsed). It answers with a promise, or with the result itself when it has it at once
 * (sent at once, and never pending); a synchronous throw is its error answer.
 */
export type RouteHandler = (params: Readonly<Record<string, unknown>>, context: CallContext) => unknown;

/** A handler with an optional deadline of its own, in milliseconds, instead of the server default, and the schema its params must meet. */
export interface RouteSpec {
  readonly handler: RouteHandler;
  readonly timeoutMs?: number;
  /** Checked by the dispatcher before the handler runs (see route() in methods.ts); a call that fails it answers invalid_params. */
  readonly params?: ParamsSchema;
}

/**
 * An immutable method -> route map built once per catalog snapshot (K-5). The server swaps whole
 * tables (K-7); nothing adds or removes a route in place.
 */
export class RouteTable {
  private readonly routes: ReadonlyMap<string, RouteSpec>;

  private constructor(routes: Map<string, RouteSpec>) {
    this.routes = routes;
    Object.freeze(this);
  }

  /** Builds a table; throws when a method name is empty or a timeout is not a positive integer. */
  static of(routes: Readonly<Record<string, RouteHandler | RouteSpec>>): RouteTable {
    const map = new Map<string, RouteSpec>();
    for (const [method, route] of Object.entries(routes)) {
      const spec = typeof route === "function" ? { handler: route } : route;
      if (method === "") throw new Error("route method names must be non-empty");
      if (spec.timeoutMs !== undefined && !(Number.isInteger(spec.timeoutMs) && spec.timeoutMs > 0)) {
        throw new Error(`route ${method}: timeoutMs must be a positive integer, got ${spec.timeoutMs}`);
      }
      map.set(method, Object.freeze({ ...spec }));
    }
    return new RouteTable(map);
  }

  /** A table of declared routes (see route() in methods.ts), each under its method's name; throws on a name given twice. */
  static declared(routes: readonly (RouteSpec & { readonly method: string })[]): RouteTable {
    const named: Record<string, RouteSpec> = {};
    for (const { method, ...spec } of routes) {
      if (method in named) throw new Error(`route ${method} is declared twice`);
      named[method] = spec;
    }
    return RouteTable.of(named);
  }

  /** The empty table: every call answers method-not-found. */
  static empty(): RouteTable {
    return RouteTable.of({});
  }

  /** The route for `method`, or undefined when the table has none. */
  get(method: string): RouteSpec | undefined {
    return this.routes.get(method);
  }

  /** The longest deadline of any route, in milliseconds, counting a route without its own as `defaultMs`. */
  longestTimeoutMs(defaultMs: number): number {
    let longest = defaultMs;
    for (const route of this.routes.values()) longest = Math.max(longest, route.timeoutMs ?? defaultMs);
    return longest;
  }

  /** Method names, sorted. */
  methods(): string[] {
    return [...this.routes.keys()].sort();
  }
}
