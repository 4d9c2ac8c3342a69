import type { JsonValue } from "../../json/index.js";
import { newOperationId, retryWhileBusy, type AdmitInput, type AdmitResult, type OperationsStore, type ReplayCandidate, type TurnOutcome } from "../../operations/index.js";
import type { PreparedCommand } from "../../session/index.js";
import type { Activation } from "../../skills/index.js";
import { API, type EventBody } from "../../api/index.js";
import type { DaemonContext } from "../context.js";
import { HttpProblem } from "../problem.js";
import type { Router, RouteRequest } from "../router.js";
import type { HostedSession } from "../sessionPort.js";
import { receiptResource } from "../views.js";

/** The 202 of an admission, or the problem of a refusal. */
function admissionReply(result: AdmitResult) {
  if (result.ok) return { status: 202 as const, body: receiptResource(result.receipt) };
  throw new HttpProblem(result.code, result.detail, { operation_id: result.operationId });
}

/** The body as a receipt lookup compares it, before its shape is checked (O-1); undefined when it names no id. */
function replayCandidate(raw: unknown): ReplayCandidate | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const { operation_id: operationId, ...rest } = raw as Record<string, unknown>;
  return typeof operationId === "string" ? { ...rest, operationId } : undefined;
}

/** What an input is: a message, a command that submits a turn (its activation to store), or one to run after admission. */
type Resolved = { kind: "message" } | { kind: "turn"; activation: Activation } | { kind: "run"; command: PreparedCommand };

/**
 * Resolves a slash command for the user against the session's current catalog before admission
 * (caller and arguments checked by the session's one resolver), so a skill's activation is
 * prepared once (C-6) and stored with the input. Throws 404 command_not_found, 409
 * reload_required, 403 forbidden, 400 invalid_params.
 */
async function resolve(live: HostedSession, body: EventBody): Promise<Resolved> {
  if (body.type === "message") return { kind: "message" };
  // The schema admits one slash name and nothing after it; the arguments come apart.
  const name = body.command.trim();
  const command = live.session.prepare(name, body.arguments, "user");
  if (command === undefined) throw new HttpProblem("command_not_found", `no command ${name} in session ${live.id}; see /help`, { command: name });
  if (!command.command.submitsTurn) return { kind: "run", command };
  return { kind: "turn", activation: (await command.run()) as Activation };
}

function admitInput(body: EventBody, operationId: string, resolved: Resolved): AdmitInput {
  if (body.type === "message") return { operationId, type: "message", text: body.text };
  const command = { operationId, type: "command" as const, command: body.command, arguments: body.arguments };
  return resolved.kind === "turn" ? { ...command, activation: resolved.activation } : command;
}

/**
 * Runs a command that submits no turn after its admission; the turn records the result
 * (committed) or the failure (cancelled). Each store write waits out another process's lock on
 * albedo.db without blocking the daemon (retryWhileBusy).
 */
async function runAdmitted(store: OperationsStore, live: HostedSession, turnId: string, command: PreparedCommand): Promise<void> {
  await retryWhileBusy(() => store.markRunning(turnId));
  const outcome = await runOutcome(command);
  live.publish({ type: "transcript", turn: await retryWhileBusy(() => store.complete(turnId, outcome)) });
}

/** How a command's run ends its turn: committed with the result, or cancelled with the failure. */
async function runOutcome(command: PreparedCommand): Promise<Exclude<TurnOutcome, { state: "abandoned" }>> {
  try {
    // Command results are JSON values: they reach Python over JSON-RPC the same way.
    const result = (await command.run()) as JsonValue | undefined;
    return { state: "committed", reply: result ?? null };
  } catch (error) {
    return { state: "cancelled", reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * POST /sessions/{id}/events (O-1, C-6). The receipt lookup comes first, before the session or
 * the body's shape is checked, so a retry gets its original answer even after a restart. While
 * another process holds albedo.db locked the admission keeps trying for STORE_BUSY_WAIT_MS, then
 * is 503 storage_busy with nothing stored.
 */
async function postEvent(ctx: DaemonContext, request: RouteRequest<typeof API.postEvent>) {
  const sessionId = request.params.id!;
  const candidate = replayCandidate(request.raw);
  const replay = candidate === undefined ? undefined : ctx.store.replay(sessionId, candidate);
  if (replay !== undefined) return admissionReply(replay);
  const live = ctx.registry.get(sessionId);
  const body = request.body();
  const resolved = await resolve(live, body);
  // Without an id of the client's choosing the input is still admitted, but a retry of it is a new input.
  const input = admitInput(body, body.operation_id ?? newOperationId(), resolved);
  const result = await retryWhileBusy(() => ctx.store.admit(sessionId, input));
  if (result.ok && !result.replayed) {
    // The admission answers with a receipt, not the turn: this is the turn's one read after its insert.
    live.publish({ type: "transcript", turn: ctx.store.getTurn(result.receipt.turnId)! });
    if (resolved.kind === "run") await runAdmitted(ctx.store, live, result.receipt.turnId, resolved.command);
    // A message or a skill command waits for the model: the session's turns run in admission order.
    // It starts once this answer has gone out: starting the first turn (its durable move to running,
    // the model's setup) is the turn's work, and took a third of each admission's time (bench/).
    else setImmediate(() => live.turns.kick());
  }
  return admissionReply(result);
}

/** Mounts the events route. */
export function eventRoutes(router: Router, ctx: DaemonContext): void {
  router.add(API.postEvent, (request) => postEvent(ctx, request));
}
