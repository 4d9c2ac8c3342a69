import type { DaemonContext } from "../context.js";
import { HttpProblem } from "../problem.js";
import type { Router } from "../router.js";
import { turnView } from "./events.js";

/** Mounts GET /operations/{id} and GET /health. */
export function operationRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add("GET", "/operations/:id", async (request) => {
      const id = request.params.id!;
      const found = ctx.store.getOperation(id);
      if (!found.found && found.reason === "expired") throw new HttpProblem("operation_expired", `operation ${id} is older than the receipt retention`, { operationId: id });
      if (!found.found) throw new HttpProblem("operation_not_found", `no operation ${id}`, { operationId: id });
      return {
        status: 200,
        body: { operationId: found.receipt.body.operationId, receipt: found.receipt, delivery: found.delivery, turn: turnView(found.turn) },
      };
    })
    .add("GET", "/health", async () => ({
      status: 200,
      body: {
        ok: true,
        pid: process.pid,
        started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(),
        sessions: ctx.registry.list().length,
        spares: ctx.registry.spares(),
        log: ctx.logStats?.() ?? null,
      },
    }));
}
