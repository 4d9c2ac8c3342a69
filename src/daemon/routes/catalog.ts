import type { SkillsPatch } from "../../settings/index.js";
import type { Session } from "../../session/index.js";
import { patchSessionCatalog, readSessionCatalog, type ManagementCatalog } from "../catalog.js";
import type { DaemonContext } from "../context.js";
import type { Router, RouteRequest } from "../router.js";
import { ifMatchRevision, objectBody, stringListField, type JsonObject } from "../validate.js";

/** The skills patch of a request body (`on`, `off`, `clear`); throws 400 invalid_body. */
export function skillsPatchOf(body: JsonObject, what: string): SkillsPatch {
  const patch: { on?: string[]; off?: string[]; clear?: string[] } = {};
  for (const key of ["on", "off", "clear"] as const) {
    const list = stringListField(body, key, what);
    if (list !== undefined) patch[key] = list;
  }
  return patch;
}

function catalogReply(catalog: ManagementCatalog, session: Session) {
  return { status: 200, body: { ...catalog, needs_reload: session.needsReload }, headers: { etag: `"${catalog.revision}"` } };
}

/** Applies session overrides after checking If-Match against the catalog as it is now (D-3). */
async function patchCatalog(ctx: DaemonContext, request: RouteRequest) {
  const { session } = ctx.registry.get(request.params.id!);
  const expected = ifMatchRevision(request.req);
  const patch = skillsPatchOf(objectBody(await request.body(), [], ["on", "off", "clear"]), "the body");
  return catalogReply(await patchSessionCatalog(session, expected, patch), session);
}

/** Mounts the management catalog routes. */
export function catalogRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add("GET", "/sessions/:id/catalog", async (request) => {
      const { session } = ctx.registry.get(request.params.id!);
      return catalogReply(await readSessionCatalog(session), session);
    })
    .add("PATCH", "/sessions/:id/catalog", (request) => patchCatalog(ctx, request));
}
