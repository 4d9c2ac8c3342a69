import { API } from "../api.js";
import type { DaemonContext } from "../context.js";
import type { Router } from "../router.js";
import { healthResource } from "../views.js";

/** Mounts what is about the daemon itself: GET /health. */
export function serviceRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.health, async () => ({ status: 200, body: healthResource(ctx.registry.list().length, ctx.registry.spares(), ctx.logStats?.() ?? null) }));
}
