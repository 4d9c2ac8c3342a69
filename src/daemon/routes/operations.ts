import { API } from "../../api/index.js";
import type { DaemonContext } from "../context.js";
import { HttpProblem } from "../problem.js";
import type { Router } from "../router.js";
import { operationResource } from "../views.js";

/** Mounts GET /operations/{id} (O-1). */
export function operationRoutes(router: Router, ctx: DaemonContext): void {
  router.add(API.getOperation, async (request) => {
    const id = request.params.id!;
    const found = ctx.store.getOperation(id);
    if (!found.found && found.reason === "expired") throw new HttpProblem("operation_expired", `operation ${id} is older than the receipt retention`, { operation_id: id });
    if (!found.found) throw new HttpProblem("operation_not_found", `no operation ${id}`, { operation_id: id });
    return { status: 200, body: operationResource(found) };
  });
}
