import { API } from "../api.js";
import type { DaemonContext } from "../context.js";
import { openApiDocument } from "../openapi.js";
import type { Router } from "../router.js";
import { healthResource } from "../views.js";
import { LOGIN_PATH } from "../webEndpoint.js";
import { cookieValue, WEB_COOKIE } from "../webLogins.js";

/** Mounts what is about the daemon itself: GET /health, GET /openapi.json and the web console's login links and logout. */
export function serviceRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.health, async () => ({ status: 200, body: healthResource(ctx.registry.list().length, ctx.registry.spares(), ctx.logStats?.() ?? null) }))
    .add(API.openapi, async () => ({ status: 200, body: openApiDocument() }))
    .add(API.createWebLogin, async () => {
      const { code, expiresAt } = ctx.web.issue();
      return { status: 201, body: { path: `${LOGIN_PATH}?code=${code}`, expires_at: new Date(expiresAt).toISOString() } };
    })
    .add(API.webLogout, async (request) => {
      ctx.web.revoke(cookieValue(request.req.headers.cookie, WEB_COOKIE));
      return { status: 204, body: undefined, headers: { "set-cookie": `${WEB_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0` } };
    });
}
