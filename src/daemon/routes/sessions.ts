import { readFile, realpath, stat } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import { API, MAX_TRANSCRIPT_PAGE_ROWS } from "../../api/index.js";
import type { DaemonContext } from "../context.js";
import { KeptOutputs } from "../outputs.js";
import { HttpProblem } from "../problem.js";
import type { Router, RouteRequest } from "../router.js";
import { storedRows } from "../turns.js";
import { createdSession, executeAnswer, imageUrl, outputResource, reloadAnswer, resumableResource, sessionResource, transcriptPage } from "../views.js";
import { isProcessAlive, within } from "../../platform/index.js";
import { outputPayloadBytes } from "../../kernel/index.js";
import type { ImageStore } from "../../images/index.js";
import { listResumable, runCell, type CellRun } from "../../session/index.js";
import { RawBody } from "../router.js";
import type { ExecuteImages } from "../views.js";
import type { HostedSession, KernelJoin, RelayTarget } from "../sessionPort.js";
import type { NetworkSetting } from "../../network/index.js";
import { globalSettingsTarget, readSettings } from "../../settings/index.js";

async function openSession(ctx: DaemonContext, request: RouteRequest<typeof API.openSession>) {
  const body = request.body();
  const found = await stat(body.workspace).catch(() => undefined);
  if (!found?.isDirectory()) throw new HttpProblem("invalid_body", `workspace ${body.workspace} is not a directory`, { field: "workspace" });
  if (body.kernel_pid !== undefined && !isProcessAlive(body.kernel_pid)) {
    throw new HttpProblem("invalid_body", `kernel_pid: no process ${body.kernel_pid} is running`, { field: "kernel_pid" });
  }
  if (body.relay !== undefined && !isProcessAlive(body.relay.launcher_pid)) {
    throw new HttpProblem("invalid_body", `relay.launcher_pid: no process ${body.relay.launcher_pid} is running`, { field: "relay.launcher_pid" });
  }
  const cwd = body.relay?.cwd === undefined ? undefined : await kernelCwd(body.workspace, body.relay.cwd);
  const join: KernelJoin | undefined =
    body.kernel_pid !== undefined ? { kind: "external", pid: body.kernel_pid }
    : body.relay !== undefined ? { kind: "relay", key: body.relay.key, pid: body.relay.launcher_pid, ...(cwd !== undefined ? { cwd } : {}) }
    : undefined;
  const live = await ctx.registry.open(body.workspace, body.extensions ?? {}, {
    ...(join ? { join } : {}),
    ...(body.remote ? { remote: body.remote } : {}),
    ...(body.client ? { client: body.client } : {}),
    ...(body.resume ? { resume: body.resume } : {}),
    ...(body.network !== undefined ? { network: await sessionNetwork(ctx, body.network) } : {}),
  });
  try {
    // Only the creator learns how to reach the RPC socket, or the kernel's channels: it is the one that starts or relays the kernel.
    const answer = createdSession(live, join?.kind === "external" ? live.session.bridge() : undefined, join?.kind === "relay" ? relayTargetOf(live) : undefined);
    // Encoded once here so that an answer that cannot be written fails while the session can still be closed.
    JSON.stringify(answer);
    return { status: 201 as const, body: answer, headers: { location: `/sessions/${live.id}` } };
  } catch (error) {
    // A failed open leaves nothing behind: no client learned this session's id, so none would close it.
    await ctx.registry.close(live.id).catch(() => undefined);
    throw error;
  }
}

/**
 * The network a session asks for at open, checked as the settings check it (the body's schema):
 * `true`, the host's whole network, only while the global setting is `true` already, so an API
 * caller cannot open more than the person's settings do. Throws 400 invalid_body.
 */
async function sessionNetwork(ctx: DaemonContext, network: NetworkSetting): Promise<NetworkSetting> {
  if (network !== true) return network;
  const global = (await readSettings(globalSettingsTarget(ctx.stateDir))).settings.network ?? false;
  if (global === true) return network;
  throw new HttpProblem("invalid_body", "network: true (the host's whole network, unfiltered) may be asked for only while the global network setting is true; give a policy object, e.g. {\"allow\": [\"pypi.org\"]}", { field: "network" });
}

/** A relayed kernel's working directory as a real path: a directory inside the workspace (the kernel sees nothing else writable). Throws 400 invalid_body. */
async function kernelCwd(workspace: string, cwd: string): Promise<string> {
  const [base, real] = await Promise.all([realpath(workspace), realpath(cwd).catch(() => undefined)]);
  const found = real === undefined ? undefined : await stat(real).catch(() => undefined);
  if (real === undefined || !found?.isDirectory()) throw new HttpProblem("invalid_body", `relay.cwd ${cwd} is not a directory`, { field: "relay.cwd" });
  if (!within(real, base)) throw new HttpProblem("invalid_body", `relay.cwd ${cwd} lies outside the workspace ${workspace}`, { field: "relay.cwd" });
  return real;
}

/** Where the relay reaches the session's kernel; a session opened for a relay always has it once booted. */
function relayTargetOf(live: HostedSession): RelayTarget {
  const target = live.session.relayTarget();
  if (target === undefined) throw new HttpProblem("kernel_died", "the relayed kernel is not running");
  return target;
}

/** The text of the pages a reply carries: IPython answers `obj?` with a "page" payload, not an output. */
function pagesOf(reply: unknown): string[] {
  const payload = (reply as { payload?: unknown }).payload;
  if (!Array.isArray(payload)) return [];
  return payload.flatMap((item: { source?: unknown; data?: Record<string, unknown> }) => (item?.source === "page" && typeof item.data?.["text/plain"] === "string" ? [item.data["text/plain"] as string] : []));
}

/** Runs code to the end; every output also goes to the stream as it comes, and the answer keeps what its bounds allow (KeptOutputs). */
async function execute(ctx: DaemonContext, request: RouteRequest<typeof API.execute>) {
  const live = ctx.registry.get(request.params.id!);
  const body = request.body();
  const executionId = body.execution_id ?? randomUUID();
  const kept = new KeptOutputs();
  const cell = await runCell(live.session.kernel, body.code, {
    onOutput: (output) => {
      live.publish({ type: "output", executionId, output });
      kept.add(outputResource(output.header.msg_type, output.content), outputPayloadBytes(output));
    },
  });
  // Without an interrupt the run waits for the cell's end, so its reply is there.
  const reply = cell.reply!;
  const images = cell.showedImages ? await keptImages(live.id, live.session.images, cell) : undefined;
  return { status: 200 as const, body: executeAnswer(executionId, reply, kept.answer(cell.cutOutputBytes), pagesOf(reply), images) };
}

/** A cell's images, kept in the session's store (I-3); each one not checked or not kept is a note. */
async function keptImages(sessionId: string, store: ImageStore, cell: CellRun): Promise<ExecuteImages> {
  const kept = await store.keepAll(cell.images);
  return { images: kept.refs.map((ref) => ({ ...ref, url: imageUrl(sessionId, ref.id) })), image_notes: [...cell.notes, ...kept.notes] };
}

/** An image's bytes, only for an id this session kept (never a path) and while its file is there. */
async function getImage(ctx: DaemonContext, request: RouteRequest<typeof API.getImage>) {
  const live = ctx.registry.get(request.params.id!);
  const id = request.params.image_id!;
  const stored = live.session.images.find(id);
  const bytes = stored === undefined ? undefined : await readFile(stored.path).catch(() => undefined);
  if (stored === undefined || bytes === undefined) throw new HttpProblem("not_found", `session ${live.id} kept no image ${id.slice(0, 80)}`);
  return { status: 200 as const, body: new RawBody(stored.mime, bytes), headers: { "cache-control": IMMUTABLE } };
}

/** An image's address is its content's hash: what it names never changes. Private: it came through the token. */
const IMMUTABLE = "private, max-age=31536000, immutable";

/** Mounts the session routes (D-2). */
export function sessionRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add(API.openSession, (request) => openSession(ctx, request))
    .add(API.listSessions, async (request) => {
      const sessions = ctx.registry.list();
      // Each read rereads the settings (D-2); a session whose file is broken is listed as it last was.
      await Promise.allSettled(sessions.map((live) => live.session.catalog.refresh()));
      const resumable = request.query.closed === "resumable" ? (await listResumable(ctx.stateDir)).map(resumableResource) : undefined;
      return { status: 200, body: { sessions: sessions.map(sessionResource), ...(resumable !== undefined ? { resumable } : {}) } };
    })
    .add(API.getSession, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      await live.session.catalog.refresh();
      return { status: 200, body: sessionResource(live) };
    })
    .add(API.restart, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      const report = await live.session.restart(request.body().restore ?? false);
      return { status: 200, body: { restore: report ?? null } };
    })
    .add(API.closeSession, async (request) => {
      await ctx.registry.close(request.params.id!);
      return { status: 204, body: undefined };
    })
    .add(API.execute, (request) => execute(ctx, request))
    .add(API.getImage, (request) => getImage(ctx, request))
    .add(API.interrupt, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      // A running turn ends as interrupted (it interrupts its own cell); otherwise the cell running now.
      if (!(await live.turns.interrupt())) await live.session.kernel.interrupt();
      return { status: 204, body: undefined };
    })
    .add(API.getTranscript, async (request) => {
      const id = request.params.id!;
      const { after = 0, limit = MAX_TRANSCRIPT_PAGE_ROWS } = request.query;
      const rows = storedRows(ctx.store, id, after, limit);
      // A session that is gone still has its transcript; only an id nothing is known of is 404.
      if (rows.length === 0 && after === 0 && !ctx.registry.list().some((live) => live.id === id)) {
        throw new HttpProblem("session_not_found", `no session ${id} and no transcript for it`, { session_id: id });
      }
      return { status: 200, body: transcriptPage(id, rows, limit) };
    })
    .add(API.reload, async (request) => {
      const live = ctx.registry.get(request.params.id!);
      // The stream hears of the swap from the session itself (LiveSession watches its view).
      return { status: 200, body: reloadAnswer(await live.session.reload()) };
    })
    .add(API.stream, async () => {
      throw new HttpProblem("upgrade_required", "the stream is a WebSocket: send the upgrade headers (Connection: Upgrade, Upgrade: websocket)");
    });
}
