import type { IncomingMessage, ServerResponse } from "node:http";
import { problemsOfIssues } from "../json/index.js";
import { presentedToken, tokenMatches } from "./auth.js";
import { checkLocalOrigin } from "./origins.js";
import { NoBody } from "./bodies.js";
import type { DaemonContext } from "./context.js";
import { HttpProblem, problemOf, sendBytes, sendJson, sendProblem } from "./problem.js";
import { ifMatchRevision, parseInput, readJsonBody } from "./requestBody.js";
import { RawBody, Router, type BoundRoute, type RouteRequest } from "./router.js";
import { catalogRoutes } from "./routes/catalog.js";
import { eventRoutes } from "./routes/events.js";
import { operationRoutes } from "./routes/operations.js";
import { serviceRoutes } from "./routes/service.js";
import { sessionRoutes } from "./routes/sessions.js";
import { settingsRoutes } from "./routes/settings.js";
import type { Log } from "../platform/index.js";

/** Who may call the API: the bearer token, or (for the web console) a login cookie the page's browser sends. */
export interface ApiAuth {
  readonly token: string;
  /** Whether the request carries a live web console login. */
  readonly cookie?: (req: IncomingMessage) => boolean;
}

/**
 * Throws 401 unless the request presents the token (header, or `?token=` where `allowQuery`) or a
 * login cookie. Host and Origin are checked first for every request (DNS rebinding); a cookie must
 * come with the page's own Origin on anything but a read, and never opens a bearer-only route.
 */
export function authenticate(req: IncomingMessage, url: URL, auth: ApiAuth, allowQuery: boolean, opts: { bearerOnly?: boolean; read?: boolean } = {}): void {
  checkLocalOrigin(req);
  if (tokenMatches(presentedToken(req, url, allowQuery), auth.token)) return;
  if (!opts.bearerOnly && auth.cookie?.(req) === true) {
    if (!opts.read && req.headers.origin === undefined) throw new HttpProblem("origin_not_allowed", "a request made with the web console's login must carry the page's Origin");
    return;
  }
  throw new HttpProblem("unauthorized", "send Authorization: Bearer <token>; the token is in daemon.token in the state dir");
}

export interface HttpOptions {
  readonly log?: Log;
  /** Check every answer against the schema its route declares; a mismatch is a 500 naming the field (tests turn it on). */
  readonly checkReplies?: boolean;
}

/** Every route of the daemon, bound to `ctx`. */
export function buildRouter(ctx: DaemonContext): Router {
  const router = new Router();
  serviceRoutes(router, ctx);
  sessionRoutes(router, ctx);
  catalogRoutes(router, ctx);
  settingsRoutes(router, ctx);
  eventRoutes(router, ctx);
  operationRoutes(router, ctx);
  return router;
}

/** The daemon's HTTP request listener: token, route, body, handler, answer; every failure answered as a problem document. */
export function httpHandler(router: Router, auth: ApiAuth, options: HttpOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => void handle(router, auth, req, res, options);
}

async function handle(router: Router, auth: ApiAuth, req: IncomingMessage, res: ServerResponse, options: HttpOptions): Promise<void> {
  try {
    const url = new URL(req.url ?? "/", "http://albedo.invalid");
    let matched: ReturnType<Router["match"]>;
    try {
      matched = router.match(req.method ?? "GET", url.pathname);
    } catch (error) {
      // Host, Origin and credentials before a 404 or 405, so a rebound name or a stranger learns not even which routes exist.
      authenticate(req, url, auth, false, { read: true });
      throw error;
    }
    const { route, params } = matched;
    authenticate(req, url, auth, false, { bearerOnly: route.spec.bearerOnly === true, read: route.spec.method === "GET" });
    const reply = await route.handler(await routeRequest(route, req, url, params));
    if (options.checkReplies) checkReply(route, reply);
    if (reply.body instanceof RawBody) sendBytes(res, reply.status, reply.body.contentType, reply.body.bytes, reply.headers);
    else sendJson(res, reply.status, reply.body, reply.headers);
  } catch (error) {
    const problem = problemOf(error);
    // A bug's stack helps; a known fault (full disk, dead kernel) is said in one line.
    const why = problem.code === "internal_error" && error instanceof Error ? (error.stack ?? error.message) : `${problem.code}: ${problem.message}`;
    if (problem.status >= 500) options.log?.("error", `${req.method} ${req.url}: ${why}`);
    if (!res.headersSent) sendProblem(res, problem);
    else res.destroy();
  }
}

/**
 * The request as its handler gets it: the body read (encoding, size and depth checked), If-Match
 * and the query parsed, then the body parsed with the route's schema (a route without one takes
 * none) unless the route parses it after a check of its own.
 */
async function routeRequest(route: BoundRoute, req: IncomingMessage, url: URL, params: Record<string, string>): Promise<RouteRequest> {
  const { spec } = route;
  const raw = await readJsonBody(req);
  const ifMatch = spec.ifMatch ? ifMatchRevision(req) : "";
  const query = spec.query === undefined ? undefined : parseInput(spec.query, Object.fromEntries(url.searchParams), "query");
  let parsed: { value: unknown } | undefined;
  const body = () => (parsed ??= { value: parseInput(spec.body ?? NoBody, raw, "body") }).value;
  if (!spec.bodyAfterLookup) body();
  return { req, url, params, query, raw, body, ifMatch } as RouteRequest;
}

/** Throws when `reply` is not one of the route's declared answers, or its body breaks that answer's schema. */
function checkReply(route: BoundRoute, reply: { status: number; body: unknown }): void {
  const declared = route.spec.responses[reply.status];
  const where = `${route.spec.method} ${route.spec.path} answered ${reply.status}`;
  if (declared === undefined) throw new HttpProblem("internal_error", `${where}, which it does not declare`);
  if ((declared.raw !== undefined) !== reply.body instanceof RawBody) throw new HttpProblem("internal_error", `${where} with ${declared.raw ? "JSON where it declares bytes" : "bytes where it declares JSON"}`);
  const parsed = declared.schema?.safeParse(reply.body);
  if (parsed !== undefined && !parsed.success) {
    const problems = problemsOfIssues(parsed.error.issues);
    throw new HttpProblem("internal_error", `${where} with a body that breaks its schema at ${problems.map((p) => `${p.path || "(top)"}: ${p.message}`).join("; ")}`);
  }
}
