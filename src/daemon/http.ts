import type { IncomingMessage, ServerResponse } from "node:http";
import { problemsOfIssues } from "../json/index.js";
import { presentedToken, tokenMatches } from "./auth.js";
import { checkWebLogin, type WebLogins } from "./webLogins.js";
import { WEB_COOKIE_LOST, NoBody, type RouteAccess } from "../api/index.js";
import { checkLocalOrigin } from "./origins.js";
import type { DaemonContext } from "./context.js";
import { HttpProblem, problemOf, sendBytes, sendJson, sendProblem } from "./problem.js";
import { ifMatchRevision, parseInput, readJsonBody } from "./requestBody.js";
import { RawBody, Router, type BoundRoute, type RouteRequest } from "./router.js";
import { catalogRoutes } from "./routes/catalog.js";
import { networkRoutes } from "./routes/network.js";
import { eventRoutes } from "./routes/events.js";
import { operationRoutes } from "./routes/operations.js";
import { serviceRoutes } from "./routes/service.js";
import { sessionRoutes } from "./routes/sessions.js";
import { settingsRoutes } from "./routes/settings.js";
import type { Log } from "../platform/index.js";

/** Who may call the API: the bearer token, or the web console's logins (page secret and cookie together). */
export interface ApiAuth {
  readonly token: string;
  /** The web console's logins; none on a daemon that serves no console. */
  readonly web?: WebLogins;
}

/** How a request was let in. */
export type Caller = "bearer" | "web";

/**
 * Throws unless the request may open a route of `access` (RouteAccess): Host and Origin are checked
 * first for every request (DNS rebinding); then the bearer token (header, or `?token=` where
 * `allowQuery`) opens everything. A web login opens `any` routes only with its page secret and its
 * cookie together, and `page_secret` routes with the secret alone; a request made through a web
 * login must carry the page's Origin on anything but a read. `login_code` routes take the page's
 * Origin alone: their body holds the credential. A live page secret whose cookie is missing or
 * another's is 401 web_cookie_lost, so the page can renew the cookie.
 */
export function authenticate(req: IncomingMessage, url: URL, auth: ApiAuth, allowQuery: boolean, opts: { access?: RouteAccess; read?: boolean } = {}): Caller {
  checkLocalOrigin(req);
  if (tokenMatches(presentedToken(req, url, allowQuery), auth.token)) return "bearer";
  const access = opts.access ?? "any";
  if (access === "bearer") throw unauthorized();
  const check = access === "login_code" ? "login" : checkWebLogin(req, auth.web);
  const admitted = check === "login" || (access === "page_secret" && check === "cookie_lost");
  if (!admitted) throw check === "cookie_lost" ? cookieLost() : unauthorized();
  if (!opts.read && req.headers.origin === undefined) throw new HttpProblem("origin_not_allowed", "a request made with the web console's login must carry the page's Origin");
  return "web";
}

const unauthorized = (): HttpProblem => new HttpProblem("unauthorized", "send Authorization: Bearer <token>; the token is in daemon.token in the state dir");
const cookieLost = (): HttpProblem =>
  new HttpProblem(WEB_COOKIE_LOST, "this page's login cookie is missing or was replaced (another program on this machine can do that); the page renews it with POST /web/login/cookie");

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
  networkRoutes(router, ctx);
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
    authenticate(req, url, auth, false, { ...(route.spec.access ? { access: route.spec.access } : {}), read: route.spec.method === "GET" });
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
