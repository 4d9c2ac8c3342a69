import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import type { RouteSpec } from "../api/index.js";
import type { DeepReadonly } from "../json/index.js";
import { HttpProblem } from "./problem.js";

/** Bytes a route answers with instead of JSON (an image): its exact media type and content. */
export class RawBody {
  constructor(
    readonly contentType: string,
    readonly bytes: Uint8Array,
  ) {}
}

type Output<T> = T extends z.ZodType ? z.output<T> : undefined;
/** What a handler may answer with: the schema's type, read-only, so views can hand on domain arrays without copying. */
type Answer<T> = T extends z.ZodType ? DeepReadonly<z.output<T>> : undefined;
type BodyOf<S extends RouteSpec> = S extends { readonly body: infer B } ? Output<B> : undefined;
type QueryOf<S extends RouteSpec> = S extends { readonly query: infer Q } ? Output<Q> : undefined;

/** What a handler gets: the request, its URL and path parameters, the parsed query, the body (parsed once, on first call), and If-Match. */
export interface RouteRequest<S extends RouteSpec = RouteSpec> {
  readonly req: IncomingMessage;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly query: QueryOf<S>;
  /** The body as JSON, checked for encoding, size and depth but not for shape. */
  readonly raw: unknown;
  /** The body parsed with the route's schema. Throws HttpProblem invalid_body naming the field. */
  body(): BodyOf<S>;
  /** The revision `If-Match` names; empty unless the route declares `ifMatch`. */
  readonly ifMatch: string;
}

/** A handler's answer: one of the route's declared statuses with a body of its schema. */
export type Reply<S extends RouteSpec> = {
  [K in keyof S["responses"] & number]: {
    readonly status: K;
    readonly body: S["responses"][K] extends { readonly raw: string } ? RawBody : Answer<S["responses"][K]["schema"]>;
    readonly headers?: Readonly<Record<string, string>>;
  };
}[keyof S["responses"] & number];

export type Handler<S extends RouteSpec> = (request: RouteRequest<S>) => Promise<Reply<S>>;

/** A route with its handler, as the router holds it. */
export interface BoundRoute {
  readonly spec: RouteSpec;
  readonly handler: (request: RouteRequest) => Promise<{ status: number; body: unknown; headers?: Readonly<Record<string, string>> }>;
  readonly pattern: RegExp;
  readonly keys: readonly string[];
}

/** Characters of one path segment; ids are far shorter. */
const MAX_SEGMENT_LENGTH = 256;

/** The route table: a method + path template (`{name}` segments) per route, each bound to its handler once. */
export class Router {
  private readonly table: BoundRoute[] = [];

  /** Binds `handler` to the route `spec` declares. */
  add<S extends RouteSpec>(spec: S, handler: NoInfer<Handler<S>>): this {
    const keys: string[] = [];
    const source = spec.path.replace(/\{([a-z_]+)\}/g, (_, key: string) => {
      keys.push(key);
      return `([^/]{1,${MAX_SEGMENT_LENGTH}})`;
    });
    this.table.push({ spec, handler: handler as unknown as BoundRoute["handler"], pattern: new RegExp(`^${source}$`), keys });
    return this;
  }

  /** Every route, in the order they were added. */
  routes(): readonly RouteSpec[] {
    return this.table.map((route) => route.spec);
  }

  /** The route and path parameters for a request. Throws 404 route_not_found, or 405 method_not_allowed when only the method is wrong. */
  match(method: string, pathname: string): { route: BoundRoute; params: Record<string, string> } {
    const allowed = new Set<string>();
    for (const route of this.table) {
      const found = route.pattern.exec(pathname);
      if (found === null) continue;
      if (route.spec.method !== method) {
        allowed.add(route.spec.method);
        continue;
      }
      const params: Record<string, string> = {};
      try {
        route.keys.forEach((key, index) => (params[key] = decodeURIComponent(found[index + 1]!)));
      } catch {
        throw new HttpProblem("route_not_found", `${pathname} has a malformed percent-encoding`);
      }
      return { route, params };
    }
    if (allowed.size > 0) throw new HttpProblem("method_not_allowed", `${method} ${pathname} is not allowed; use ${[...allowed].join(", ")}`, { allow: [...allowed] });
    throw new HttpProblem("route_not_found", `no route ${method} ${pathname}; see GET /openapi.json`);
  }
}
