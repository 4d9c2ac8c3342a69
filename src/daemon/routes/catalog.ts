import { patchSkills, validateSettings, type Settings } from "../../settings/index.js";
import { API } from "../api.js";
import { buildManagementCatalog, type ManagementCatalog } from "../catalog.js";
import type { DaemonContext } from "../context.js";
import { HttpProblem } from "../problem.js";
import type { Router, RouteRequest } from "../router.js";
import type { HostedSession } from "../sessionPort.js";
import { catalogResource } from "../views.js";

/** Reads the catalog: settings reread first, then one walk, which also refreshes `needs_reload` (D-2). Never reloads the session. */
async function readCatalog(ctx: DaemonContext, live: HostedSession): Promise<ManagementCatalog> {
  await live.refreshSelection();
  const { catalog, discoveredRevision } = await buildManagementCatalog(live.session.view, ctx.install);
  live.recordWalk(discoveredRevision);
  return catalog;
}

function catalogReply(catalog: ManagementCatalog, live: HostedSession) {
  return { status: 200 as const, body: catalogResource(catalog, live.needsReload), headers: { etag: `"${catalog.revision}"` } };
}

/** The session scope's settings after a patch, held to the same bounds as a file (D-4). Throws 400 invalid_params. */
function checkedSessionSettings(settings: Settings): Settings {
  const checked = validateSettings(settings, "session");
  if (checked.ok) return checked.settings;
  const first = checked.problems[0]!;
  throw new HttpProblem("invalid_params", `the session overrides would break the settings schema: ${first.path}: ${first.message}`, { problems: checked.problems });
}

/** Applies session overrides after checking If-Match against the catalog as it is now (D-3). */
async function patchCatalog(ctx: DaemonContext, request: RouteRequest<typeof API.patchCatalog>) {
  const live = ctx.registry.get(request.params.id!);
  const patch = request.body();
  await live.refreshSelection();
  const catalog = await live.serialize(async () => {
    const { catalog: current } = await buildManagementCatalog(live.session.view, ctx.install);
    if (current.revision !== request.ifMatch) {
      throw new HttpProblem("catalog_changed", `the catalog is at revision ${current.revision}, not ${request.ifMatch}; read it again`, { current_revision: current.revision });
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

/** Mounts the management catalog routes (D-3). */
export function catalogRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.getCatalog, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      return catalogReply(await readCatalog(ctx, live), live);
    })
    .add(API.patchCatalog, (request) => patchCatalog(ctx, request));
}
