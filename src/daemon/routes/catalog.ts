import { patchSkills, validateSettings, type Settings, type SkillsPatch } from "../../settings/index.js";
import { buildManagementCatalog, type ManagementCatalog } from "../catalog.js";
import type { DaemonContext } from "../context.js";
import type { LiveSession } from "../live.js";
import { HttpProblem } from "../problem.js";
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

/** Reads the catalog: settings reread first, then one walk, which also refreshes `needs_reload` (D-2). Never reloads the session. */
async function readCatalog(ctx: DaemonContext, live: LiveSession): Promise<ManagementCatalog> {
  await live.refreshSelection();
  const { catalog, discoveredRevision } = await buildManagementCatalog(live.session.view, ctx.install);
  live.recordWalk(discoveredRevision);
  return catalog;
}

function catalogReply(catalog: ManagementCatalog, live: LiveSession) {
  return { status: 200, body: { ...catalog, needs_reload: live.needsReload }, headers: { etag: `"${catalog.revision}"` } };
}

/** The session scope's settings after a patch, held to the same bounds as a file (D-4). Throws 400 invalid_params. */
function checkedSessionSettings(settings: Settings): Settings {
  const checked = validateSettings(settings, "session");
  if (checked.ok) return checked.settings;
  const first = checked.problems[0]!;
  throw new HttpProblem("invalid_params", `the session overrides would break the settings schema: ${first.path}: ${first.message}`, { problems: checked.problems });
}

/** Applies session overrides after checking If-Match against the catalog as it is now (D-3). */
async function patchCatalog(ctx: DaemonContext, request: RouteRequest) {
  const live = ctx.registry.get(request.params.id!);
  const expected = ifMatchRevision(request.req);
  const patch = skillsPatchOf(objectBody(await request.body(), [], ["on", "off", "clear"]), "the body");
  await live.refreshSelection();
  const catalog = await live.serialize(async () => {
    const { catalog: current } = await buildManagementCatalog(live.session.view, ctx.install);
    if (current.revision !== expected) {
      throw new HttpProblem("catalog_changed", `the catalog is at revision ${current.revision}, not ${expected}; read it again`, { current_revision: current.revision });
    }
    const session = checkedSessionSettings(patchSkills(live.session.view.selection.scopes.session ?? {}, patch));
    await live.session.updateSelection(session);
    const { catalog: after, discoveredRevision } = await buildManagementCatalog(live.session.view, ctx.install);
    live.recordWalk(discoveredRevision);
    return after;
  });
  live.publishStatus(live.session.status().kernel);
  return catalogReply(catalog, live);
}

/** Mounts the management catalog routes. */
export function catalogRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add("GET", "/sessions/:id/catalog", async (request) => {
      const live = ctx.registry.get(request.params.id!);
      return catalogReply(await readCatalog(ctx, live), live);
    })
    .add("PATCH", "/sessions/:id/catalog", (request) => patchCatalog(ctx, request));
}
