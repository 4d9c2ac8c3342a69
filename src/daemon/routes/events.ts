import { findCommand, parseSlashLine } from "../../commands/index.js";
import type { Activation } from "../../skills/index.js";
import type { AdmitInput, AdmitResult, OperationsStore, Turn } from "../../operations/index.js";
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

/** What a typed command is: a skill (its activation to store) or a built-in to run after admission. */
type Resolved = { kind: "skill"; activation: Activation } | { kind: "builtin"; name: string; text: string } | { kind: "unchecked" };

/**
 * Resolves a slash command against the session's current catalog before admission, so a skill's
 * activation is prepared once (C-6) and stored with the input. A body too malformed to name a
 * command is left for the store to refuse. Throws 404 command_not_found, 409 reload_required.
 */
async function resolveCommand(live: LiveSession, body: Record<string, unknown>): Promise<Resolved> {
  if (body.type !== "command" || typeof body.command !== "string" || typeof body.arguments !== "string") return { kind: "unchecked" };
  const parsed = parseSlashLine(body.command);
  if (parsed === undefined || parsed.text !== "") return { kind: "unchecked" };
  const command = findCommand(live.session.view.commands, parsed.name);
  if (command === undefined) throw new HttpProblem("command_not_found", `no command ${parsed.name} in session ${live.id}; see /help`, { command: parsed.name });
  if (command.skill === undefined) return { kind: "builtin", name: command.name, text: body.arguments };
  const activation = (await live.session.invoke(command.name, body.arguments, "user")) as Activation;
  return { kind: "skill", activation };
}

/** Runs a built-in typed by a person after its admission; the turn records the result (committed) or the failure (cancelled). */
async function runBuiltin(store: OperationsStore, live: LiveSession, turnId: string, name: string, text: string): Promise<void> {
  store.markRunning(turnId);
  try {
    const result = await live.session.invoke(name, text, "user");
    if (name === "/reload") live.publishStatus(live.session.status().kernel);
    store.complete(turnId, { state: "committed", reply: JSON.stringify(result ?? null) });
  } catch (error) {
    store.complete(turnId, { state: "cancelled", reason: error instanceof Error ? error.message : String(error) });
  }
  live.publish({ type: "transcript", turn: turnView(store.getTurn(turnId)!) });
}

/**
 * POST /sessions/{id}/events (O-1, C-6). The receipt lookup comes first, before the session or
 * the body is checked, so a retry gets its original answer even after a restart.
 */
async function postEvent(ctx: DaemonContext, request: RouteRequest): Promise<Reply> {
  const sessionId = request.params.id!;
  const raw = await request.body();
  const body = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  const replay = body === undefined ? undefined : ctx.store.replay(sessionId, body as unknown as AdmitInput);
  if (replay !== undefined) return admissionReply(replay);
  const live = ctx.registry.get(sessionId);
  if (body === undefined) throw new HttpProblem("invalid_body", "the body must be a JSON object");
  const resolved = await resolveCommand(live, body);
  const input = (resolved.kind === "skill" ? { ...body, activation: resolved.activation } : body) as unknown as AdmitInput;
  const result = ctx.store.admit(sessionId, input);
  if (result.ok && !result.replayed) {
    live.publish({ type: "transcript", turn: turnView(ctx.store.getTurn(result.body.turnId)!) });
    if (resolved.kind === "builtin") await runBuiltin(ctx.store, live, result.body.turnId, resolved.name, resolved.text);
  }
  return admissionReply(result);
}

/** Mounts the events route. */
export function eventRoutes(router: Router, ctx: DaemonContext): void {
  router.add("POST", "/sessions/:id/events", (request) => postEvent(ctx, request));
}
