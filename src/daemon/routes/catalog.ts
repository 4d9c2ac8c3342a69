import { API } from "../../api/index.js";
import { patchSessionCatalog, readSessionCatalog, type ManagementCatalog } from "../catalog.js";
import type { DaemonContext } from "../context.js";
import type { Router } from "../router.js";
import type { HostedSession } from "../sessionPort.js";
import { catalogResource } from "../views.js";

function catalogReply(catalog: ManagementCatalog, live: HostedSession) {
  return { status: 200 as const, body: catalogResource(catalog, live.session.needsReload), headers: { etag: `"${catalog.revision}"` } };
}

/** Mounts the management catalog routes (D-3): a read walks the files once; a patch checks If-Match and applies in the same walk. */
export function catalogRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.getCatalog, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      return catalogReply(await readSessionCatalog(live.session), live);
    })
    .add(API.patchCatalog, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      return catalogReply(await patchSessionCatalog(live.session, request.ifMatch, request.body()), live);
    });
}
