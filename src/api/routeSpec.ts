/**
 * What a route declaration says (routes.ts): its method and path, what it takes, who may open it,
 * and each answer it can give. The daemon binds a handler to each declaration; clients, the
 * OpenAPI writer and the page's generated contract read the same declarations.
 */
import type { z } from "zod";
import type { ProblemCode } from "./problems.js";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** One answer a route can give: when, its body's schema (none for 204), and the headers it sets. */
export interface ResponseSpec {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** The answer carries the resource's revision as `ETag`. */
  readonly etag?: true;
  /** The answer carries `Location`, the new resource's path. */
  readonly location?: true;
  /** A WebSocket: the connection switches protocols, and each message has this schema. */
  readonly websocket?: z.ZodType;
  /** The body is bytes of this media type (a pattern such as `image/*` for OpenAPI), sent as bytes (the daemon's RawBody), not JSON. */
  readonly raw?: string;
}

/**
 * Who opens a route: `any` (the default), the bearer token or a web console login (its page secret
 * and its cookie together); `bearer`, the token only (a route that mints logins); `page_secret`, the
 * token or a login's page secret even without its cookie (renewing that cookie, logging out);
 * `login_code`, anyone from the page's origin, the body carrying the credential (a login code).
 */
export type RouteAccess = "any" | "bearer" | "page_secret" | "login_code";

/** A route of the daemon's contract: what it takes, what it answers, and which problems it may give besides the common ones. */
export interface RouteSpec {
  readonly method: Method;
  /** The path as OpenAPI writes it: `/sessions/{id}`. */
  readonly path: string;
  readonly summary: string;
  readonly body?: z.ZodType;
  readonly query?: z.ZodType;
  /** The route needs `If-Match` with the revision the client last read (428 without). */
  readonly ifMatch?: true;
  /** Who may open it besides the bearer token; by default a web console login too (RouteAccess). */
  readonly access?: RouteAccess;
  /** The handler parses the body itself, after a check that must come first (the receipt lookup of O-1). */
  readonly bodyAfterLookup?: true;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  readonly problems: readonly ProblemCode[];
}
