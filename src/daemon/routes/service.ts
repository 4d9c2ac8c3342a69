import type { IncomingMessage } from "node:http";
import { API, openApiDocument, WEB_LOGIN_PATH } from "../../api/index.js";
import type { DaemonContext } from "../context.js";
import { HttpProblem } from "../problem.js";
import type { Router } from "../router.js";
import { healthResource } from "../views.js";
import { loginCookieHeader, presentedPageSecret } from "../webLogins.js";

/** Mounts what is about the daemon itself: GET /health, GET /openapi.json and the web console's logins. */
export function serviceRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.health, async () => ({ status: 200, body: healthResource(ctx.registry.list().length, ctx.registry.spares(), ctx.logStats?.() ?? null) }))
    .add(API.openapi, async () => ({ status: 200, body: openApiDocument() }))
    .add(API.createWebLogin, async () => {
      const { code, expiresAt } = ctx.web.issue();
      return { status: 201, body: { path: `${WEB_LOGIN_PATH}#code=${code}`, expires_at: new Date(expiresAt).toISOString() } };
    })
    .add(API.redeemWebLogin, async (request) => {
      const port = browserPort(request.req);
      const login = ctx.web.redeem(request.body().code);
      if (login === undefined) throw new HttpProblem("unauthorized", "this login link was used already or has expired; run `albedo web` for a new one");
      return { status: 201, body: { page_secret: login.page }, headers: { "set-cookie": loginCookieHeader(port, login.cookie), "cache-control": "no-store" } };
    })
    .add(API.renewWebCookie, async (request) => {
      const port = browserPort(request.req);
      const cookie = ctx.web.renewCookie(presentedPageSecret(request.req.headers));
      if (cookie === undefined) throw new HttpProblem("unauthorized", "this page's login has ended; run `albedo web` for a new link");
      return { status: 204, body: undefined, headers: { "set-cookie": loginCookieHeader(port, cookie) } };
    })
    .add(API.webLogout, async (request) => {
      ctx.web.revoke(presentedPageSecret(request.req.headers));
      return { status: 204, body: undefined, headers: { "set-cookie": loginCookieHeader(browserPort(request.req), "") } };
    });
}

/** The TCP port a browser reached the daemon on; a Unix socket has none, and no web console. */
function browserPort(req: IncomingMessage): number {
  const port = req.socket.localPort;
  if (port === undefined) throw new HttpProblem("forbidden", "the web console is served over TCP only; this daemon listens on a Unix socket");
  return port;
}
