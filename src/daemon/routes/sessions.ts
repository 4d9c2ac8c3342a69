import { stat } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import { bridgeJson } from "../../bridge/index.js";
import type { ExecuteOutput } from "../../kernel/index.js";
import type { DaemonContext } from "../context.js";
import type { LiveSession } from "../live.js";
import { MAX_EXECUTION_ID_LENGTH, MAX_REQUEST_BODY_BYTES } from "../limits.js";
import { KeptOutputs } from "../outputs.js";
import { HttpProblem } from "../problem.js";
import type { Router, RouteRequest } from "../router.js";
import { isProcessAlive } from "../../settings/index.js";
import { absolutePathField, booleanField, objectBody, stringField, type JsonObject } from "../validate.js";

/** Refuses a body on a route that takes none (an empty object is accepted). */
export async function noBody(request: RouteRequest): Promise<void> {
  const body = await request.body();
  if (body !== undefined) objectBody(body, [], []);
}

/** The session's contributions per extension (K-8): skills, instruction files, RPC routes, commands. */
function composition(live: LiveSession): Record<string, unknown> {
  const view = live.session.view;
  const methods = live.session.methods();
  const skillCommands = view.commands.commands.filter((command) => command.skill !== undefined).length;
  return {
    extensions: {
      python: { enabled: true, routes: methods.filter((m) => !m.startsWith("skills.")), commands: view.commands.commands.length - skillCommands },
      skills: {
        enabled: view.extensions.skills,
        depends_on: ["python"],
        skills: view.snapshot.skills.length,
        instructions: view.snapshot.instructions.map((file) => file.path),
        routes: methods.filter((m) => m.startsWith("skills.")),
        commands: skillCommands,
      },
    },
  };
}

/** The session resource (D-2). */
export function sessionResource(live: LiveSession): Record<string, unknown> {
  const { session } = live;
  const view = session.view;
  const effective = Object.fromEntries(Object.entries(view.effective).map(([name, e]) => [name, { enabled: e.enabled, decided_by: e.decidedBy }]));
  return {
    id: session.id,
    workspace: live.session.workspace,
    status: "open",
    kernel: { status: session.status().kernel, pid: session.status().pid ?? null, sandbox: session.status().sandbox, sandbox_notes: session.status().sandboxNotes, warm: live.warm },
    revision: view.snapshot.revision,
    discovered_revision: view.discovered.revision,
    needs_reload: live.session.needsReload,
    selection: { settings_revision: view.selection.settingsRevision, scopes: view.selection.scopes, effective },
    composition: composition(live),
    commands: view.commands.commands.map((c) => ({ name: c.name, description: c.description, arguments: c.arguments, callers: c.callers, submits_turn: c.submitsTurn })),
  };
}

async function createSession(ctx: DaemonContext, request: RouteRequest) {
  const body = objectBody(await request.body(), ["workspace"], ["extensions", "kernel", "kernel_pid"]);
  const workspace = absolutePathField(body, "workspace")!;
  const extensions = body.extensions === undefined ? {} : objectBody(body.extensions, [], ["skills"], "extensions");
  const skills = booleanField(extensions, "skills", "extensions");
  const found = await stat(workspace).catch(() => undefined);
  if (!found?.isDirectory()) throw new HttpProblem("invalid_body", `workspace ${workspace} is not a directory`, { field: "workspace" });
  const externalPid = externalKernelPid(body);
  const live = await ctx.registry.open(workspace, skills === undefined ? {} : { skills }, externalPid);
  try {
    // Only the creator learns how to reach the RPC socket: it is the one that starts the kernel.
    const rpc = externalPid === undefined ? {} : { rpc: bridgeJson(live.session.bridge()) };
    const body = { ...sessionResource(live), ...rpc };
    // Encoded once here so that an answer that cannot be written fails while the session can still be closed.
    JSON.stringify(body);
    return { status: 201, body, headers: { location: `/sessions/${live.id}` } };
  } catch (error) {
    // A failed open leaves nothing behind: no client learned this session's id, so none would close it.
    await ctx.registry.close(live.id).catch(() => undefined);
    throw error;
  }
}

/** `kernel: "external"` with the pid of a running process, or undefined for a session's own kernel. Throws 400 invalid_body. */
function externalKernelPid(body: JsonObject): number | undefined {
  const kernel = stringField(body, "kernel", 16) ?? "own";
  if (kernel !== "own" && kernel !== "external") throw new HttpProblem("invalid_body", `the body: "kernel" must be "own" or "external", got ${JSON.stringify(kernel)}`, { field: "kernel" });
  const pid = body.kernel_pid;
  if (kernel === "own") {
    if (pid !== undefined) throw new HttpProblem("invalid_body", `the body: "kernel_pid" goes with "kernel": "external"`, { field: "kernel_pid" });
    return undefined;
  }
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) {
    throw new HttpProblem("invalid_body", `the body: "kernel_pid" must be the positive integer pid of the kernel process`, { field: "kernel_pid" });
  }
  if (!isProcessAlive(pid)) throw new HttpProblem("invalid_body", `the body: no process ${pid} is running`, { field: "kernel_pid" });
  return pid;
}

/** The text of the pages a reply carries: IPython answers `obj?` with a "page" payload, not an output. */
function pagesOf(reply: unknown): string[] {
  const payload = (reply as { payload?: unknown }).payload;
  if (!Array.isArray(payload)) return [];
  return payload.flatMap((item: { source?: unknown; data?: Record<string, unknown> }) => (item?.source === "page" && typeof item.data?.["text/plain"] === "string" ? [item.data["text/plain"] as string] : []));
}

/** Runs code to the end; every output also goes to the stream as it comes, and the answer keeps what its bounds allow (KeptOutputs). */
async function execute(ctx: DaemonContext, request: RouteRequest) {
  const live = ctx.registry.get(request.params.id!);
  const body = objectBody(await request.body(), ["code"], ["execution_id"]);
  const code = stringField(body, "code", MAX_REQUEST_BODY_BYTES)!;
  const executionId = stringField(body, "execution_id", MAX_EXECUTION_ID_LENGTH) ?? randomUUID();
  const kept = new KeptOutputs();
  const future = live.session.execute(code);
  future.onOutput((output: ExecuteOutput) => {
    const item = { msg_type: output.header.msg_type, content: output.content };
    live.publish({ type: "output", execution_id: executionId, ...item });
    kept.add(item);
  });
  const reply = await future.done;
  return {
    status: 200,
    body: { execution_id: executionId, status: reply.status, execution_count: reply.execution_count ?? null, pages: pagesOf(reply), ...kept.answer(future.cutOutputBytes) },
  };
}

/** Mounts the session routes. */
export function sessionRoutes(router: Router, ctx: DaemonContext): void {
  router
    .add("POST", "/sessions", (request) => createSession(ctx, request))
    .add("GET", "/sessions", async () => ({
      status: 200,
      body: { sessions: ctx.registry.list().map((live) => ({ id: live.id, workspace: live.session.workspace, kernel: live.session.status().kernel, revision: live.session.view.snapshot.revision })) },
    }))
    .add("GET", "/sessions/:id", async (request) => {
      const live = ctx.registry.get(request.params.id!);
      await live.session.refresh();
      return { status: 200, body: sessionResource(live) };
    })
    .add("DELETE", "/sessions/:id", async (request) => {
      await ctx.registry.close(request.params.id!);
      return { status: 204 };
    })
    .add("POST", "/sessions/:id/execute", (request) => execute(ctx, request))
    .add("POST", "/sessions/:id/interrupt", async (request) => {
      const live = ctx.registry.get(request.params.id!);
      await noBody(request);
      await live.session.interrupt();
      return { status: 204 };
    })
    .add("POST", "/sessions/:id/reload", async (request) => {
      const live = ctx.registry.get(request.params.id!);
      await noBody(request);
      const result = await live.session.reload();
      return {
        status: 200,
        body: { revision: result.revision, previous_revision: result.previousRevision, added: result.added, removed: result.removed, skills: result.skills },
      };
    });
}
