import { API } from "../../api/index.js";
import { AppError } from "../../errors/index.js";
import { MAX_RECORDS_PAGE, NetworkEditError } from "../../network/index.js";
import type { DaemonContext } from "../context.js";
import type { Router } from "../router.js";
import { networkResource } from "../views.js";

/**
 * The session's network routes (N-1, N-4): what its kernel may reach with a page of its
 * connection records, and a change of its policy that the kernel's next connection meets.
 */
export function networkRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.getNetwork, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      const { after = 0, limit = MAX_RECORDS_PAGE } = request.query;
      const page = live.session.network.egress?.page(after, limit) ?? { records: [], next: undefined };
      return { status: 200, body: networkResource(live.id, live.session.network.state(), page) };
    })
    .add(API.patchNetwork, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      const body = request.body();
      const egress = live.session.network.egress;
      if (egress === undefined) {
        const state = live.session.network.state();
        throw new AppError("conflict", `this session's network cannot be changed while it runs: ${state.text}; its kernel has no egress proxy (a sandboxed kernel whose network setting is not true has one)`);
      }
      try {
        if (body.reset === true) egress.reset();
        egress.edit({ ...(body.allow ? { allow: body.allow } : {}), ...(body.deny ? { deny: body.deny } : {}) });
      } catch (error) {
        if (error instanceof NetworkEditError) throw new AppError("invalid_params", error.message);
        throw error;
      }
      return { status: 200, body: networkResource(live.id, live.session.network.state(), { records: [], next: undefined }) };
    });
}
