import { parseSlashLine } from "../../commands/index.js";
import type { PreparedCommand } from "../../session/index.js";
import type { Activation } from "../../skills/index.js";
import { newOperationId, type AdmitInput, type AdmitResult, type OperationsStore, type Turn } from "../../operations/index.js";
import type { DaemonContext } from "../context.js";
import type { LiveSession } from "../live.js";
import { HttpProblem, PROBLEM_TYPE_PREFIX } from "../problem.js";
import type { Reply, Router, RouteRequest } from "../router.js";

/** The reply for an admission answer: the receipt as stored, or a problem document for a refusal. */
function admissionReply(result: AdmitResult): Reply {
  if (result.ok) return { status: result.status, body: result.body };
  return { status: result.status, body: { type: PROBLEM_TYPE_PREFIX + result.body.code, status: result.status, ...result.body }, problem: true };
}

/** A turn as the stream and GET /operations show it. */
export function turnView(turn: Turn): Record<string, unknown> {
  return {
    turnId: turn.turnId,
    operationId: turn.operationId,
    sessionId: turn.sessionId,
    visibleText: turn.visibleText,
    modelInput: turn.modelInput,
    state: turn.state,
    ...(turn.outcome ? { outcome: turn.outcome } : {}),
    createdAt: new Date(turn.createdAt).toISOString(),
    updatedAt: new Date(turn.updatedAt).toISOString(),
  };
}

/** What a typed command is: one that submits a turn (its activation to store) or one to run after admission. */
type Resolved = { kind: "turn"; activation: Activation } | { kind: "run"; command: PreparedCommand } | { kind: "unchecked" };

/**
 * Resolves a slash command for the user against the session's current catalog before admission
 * (caller and arguments checked by the session's one resolver), so a skill's activation is
 * prepared once (C-6) and stored with the input. A body too malformed to name a command is left
 * for the store to refuse. Throws 404 command_not_found, 409 reload_required, 403 forbidden,
 * 400 invalid_params.
 */
async function resolveCommand(live: LiveSession, body: Record<string, unknown>): Promise<Resolved> {
  if (body.type !== "command" || typeof body.command !== "string" || typeof body.arguments !== "string") return { kind: "unchecked" };
  const parsed = parseSlashLine(body.command);
  if (parsed === undefined || parsed.text !== "") return { kind: "unchecked" };
  const command = live.session.prepare(parsed.name, body.arguments, "user");
  if (command === undefined) throw new HttpProblem("command_not_found", `no command ${parsed.name} in session ${live.id}; see /help`, { command: parsed.name });
  if (!command.command.submitsTurn) return { kind: "run", command };
  return { kind: "turn", activation: (await command.run()) as Activation };
}

/** Runs a command that submits no turn after its admission; the turn records the result (committed) or the failure (cancelled). */
async function runAdmitted(store: OperationsStore, live: LiveSession, turnId: string, command: PreparedCommand): Promise<void> {
  store.markRunning(turnId);
  try {
    const result = await command.run();
    store.complete(turnId, { state: "committed", reply: JSON.stringify(result ?? null) });
  } catch (error) {
    store.complete(turnId, { state: "cancelled", reason: error instanceof Error ? error.message : String(error) });
  }
  live.publish({ type: "transcript", turn: turnView(store.getTurn(turnId)!) });
}

/**
 * The body with what a client may leave out filled in: a command's `arguments` ("") and the
 * operation id, which the server then mints (UUIDv7) and the answer carries. An id that is sent
 * is kept as sent, for the store to check; only a client that sends one can retry safely.
 */
function withDefaults(body: Record<string, unknown>): Record<string, unknown> {
  const filled = { ...body };
  if (filled.operationId === undefined) filled.operationId = newOperationId();
  if (filled.type === "command" && filled.arguments === undefined) filled.arguments = "";
  return filled;
}

/**
 * POST /sessions/{id}/events (O-1, C-6). The receipt lookup comes first, before the session or
 * the body is checked, so a retry gets its original answer even after a restart.
 */
async function postEvent(ctx: DaemonContext, request: RouteRequest): Promise<Reply> {
  const sessionId = request.params.id!;
  const raw = await request.body();
  const body = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? withDefaults(raw as Record<string, unknown>) : undefined;
  const replay = body === undefined ? undefined : ctx.store.replay(sessionId, body as unknown as AdmitInput);
  if (replay !== undefined) return admissionReply(replay);
  const live = ctx.registry.get(sessionId);
  if (body === undefined) throw new HttpProblem("invalid_body", "the body must be a JSON object");
  const resolved = await resolveCommand(live, body);
  const input = (resolved.kind === "turn" ? { ...body, activation: resolved.activation } : body) as unknown as AdmitInput;
  const result = ctx.store.admit(sessionId, input);
  if (result.ok && !result.replayed) {
    live.publish({ type: "transcript", turn: turnView(ctx.store.getTurn(result.body.turnId)!) });
    if (resolved.kind === "run") await runAdmitted(ctx.store, live, result.body.turnId, resolved.command);
  }
  return admissionReply(result);
}

/** Mounts the events route. */
export function eventRoutes(router: Router, ctx: DaemonContext): void {
  router.add("POST", "/sessions/:id/events", (request) => postEvent(ctx, request));
}
