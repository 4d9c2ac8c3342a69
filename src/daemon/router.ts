import type { IncomingMessage } from "node:http";
import { HttpProblem } from "./problem.js";
import { readJsonBody } from "./validate.js";

/** What a handler gets: the request, its parsed URL, the path parameters, and a lazy JSON body reader. */
export interface RouteRequest {
  readonly req: IncomingMessage;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  /** The parsed JSON body (undefined when empty); read once, cached. */
  body(): Promise<unknown>;
}

/** A handler's answer: a status and an optional JSON body. `problem` marks a body that is a problem document. */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly problem?: boolean;
}

export type Handler = (request: RouteRequest) => Promise<Reply>;

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly keys: readonly string[];
  readonly handler: Handler;
}

/** Characters of one path segment; ids are far shorter. */
const MAX_SEGMENT_LENGTH = 256;

/** A method + path table with `:name` segments. */
export class Router {
  private readonly routes: Route[] = [];

  /** Adds a route, e.g. add("GET", "/sessions/:id", handler). */
  add(method: string, path: string, handler: Handler): this {
    const keys: string[] = [];
    const source = path.replace(/:([a-z_]+)/g, (_, key: string) => {
      keys.push(key);
      return `([^/]{1,${MAX_SEGMENT_LENGTH}})`;
    });
    this.routes.push({ method, pattern: new RegExp(`^${source}$`), keys, handler });
    return this;
  }

  /** The handler and parameters for a request. Throws 404 route_not_found, or 405 method_not_allowed when only the method is wrong. */
  match(method: string, pathname: string): { handler: Handler; params: Record<string, string> } {
    let allowed: string[] = [];
    for (const route of this.routes) {
      const found = route.pattern.exec(pathname);
      if (found === null) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      try {
        route.keys.forEach((key, index) => (params[key] = decodeURIComponent(found[index + 1]!)));
      } catch {
        throw new HttpProblem("route_not_found", `${pathname} has a malformed percent-encoding`);
      }
      return { handler: route.handler, params };
    }
    allowed = [...new Set(allowed)];
    if (allowed.length > 0) throw new HttpProblem("method_not_allowed", `${method} ${pathname} is not allowed; use ${allowed.join(", ")}`, { allow: allowed });
    throw new HttpProblem("route_not_found", `no route ${method} ${pathname}; see docs/http-api.md`);
  }
}

/** Builds the RouteRequest of an incoming request. */
export function routeRequest(req: IncomingMessage, url: URL, params: Record<string, string>): RouteRequest {
  let body: Promise<unknown> | undefined;
  return { req, url, params, body: () => (body ??= readJsonBody(req)) };
}
