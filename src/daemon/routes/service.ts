import { API } from "../api.js";
import type { DaemonContext } from "../context.js";
import { openApiDocument } from "../openapi.js";
import type { Router } from "../router.js";
import { healthResource } from "../views.js";

/** Mounts what is about the daemon itself: GET /health and GET /openapi.json. */
export function serviceRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.health, async () => ({ status: 200, body: healthResource(ctx.registry.list().length, ctx.registry.spares(), ctx.logStats?.() ?? null) }))
    .add(API.openapi, async () => ({ status: 200, body: openApiDocument() }));
}
