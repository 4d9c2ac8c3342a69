/**
 * The view layer: every resource the daemon sends is built here from domain objects, in the one
 * shape the api domain's resources.ts describes. Domain types keep their own casing; the wire's is
 * snake_case.
 */
import { bridgeJson, type KernelBridge } from "../bridge/index.js";
import type { ExecuteReply } from "../kernel/index.js";
import type { OperationLookup, Receipt, Turn, TurnOutcome } from "../operations/index.js";
import type { NumberedRecord } from "../network/index.js";
import type { NetworkState, ReloadResult, ResumableSession } from "../session/index.js";
import type { SettingsSnapshot, SettingsTarget } from "../settings/index.js";
import { stripAnsi } from "../text/index.js";
import type { StoredRow } from "../turns/index.js";
import type { ManagementCatalog } from "./catalog.js";
import type { LogStats } from "./log.js";
import type { OutputsAnswer } from "./outputs.js";
import type { SpareStatus } from "./pool.js";
import type {
  BridgeResource, CatalogResource, CreatedSession, ExecuteAnswer, HealthResource, KernelResource, NetworkResource, NetworkSummary, OperationResource, OutputResource,
  ReceiptResource, ReloadAnswer, ResumableSessionResource, SessionResource, SettingsFileResource, StreamMessage, TranscriptPage, TranscriptRowResource, TurnResource,
} from "../api/index.js";
import type { HostedSession, RelayTarget, StreamEvent } from "./sessionPort.js";

/** The session's kernel; `status` overrides the current one (a status event reports the state it is about). */
export function kernelResource(live: HostedSession, status?: string): KernelResource {
  const now = live.session.status();
  return {
    status: (status ?? now.kernel) as KernelResource["status"],
    pid: now.pid ?? null,
    sandbox: now.sandbox,
    sandbox_notes: now.sandboxNotes,
    warm: live.warm,
    checkpoints: now.checkpoints ?? false,
    restore: now.restore ?? null,
  };
}

/** The session resource (D-2). */
export function sessionResource(live: HostedSession): SessionResource {
  const view = live.session.view;
  const effective = Object.fromEntries(Object.entries(view.effective).map(([name, verdict]) => [name, { enabled: verdict.enabled, decided_by: verdict.decidedBy }]));
  return {
    id: live.id,
    workspace: live.session.workspace,
    status: "open",
    client: live.client,
    opened_at: new Date(live.openedAt).toISOString(),
    kernel: kernelResource(live),
    revision: view.snapshot.revision,
    discovered_revision: view.discovered.revision,
    needs_reload: live.session.catalog.needsReload,
    selection: { settings_revision: view.selection.settingsRevision, scopes: view.selection.scopes, effective },
    composition: composition(live),
    commands: view.commands.commands.map((command) => ({
      name: command.name,
      description: command.description,
      arguments: command.arguments.map(({ name, help, required }) => ({ name, help, required })),
      callers: command.callers,
      submits_turn: command.submitsTurn,
    })),
    usage: live.session.status().usage ?? null,
    network: networkSummary(live.session.network.state()),
  };
}

/** What the session's kernel may reach, on the wire (N-1, N-4). */
export function networkSummary(state: NetworkState): NetworkSummary {
  return {
    mode: state.mode,
    text: state.text,
    hosts: state.hosts,
    from: state.from,
    setting: state.setting as NetworkSummary["setting"],
    connections: { ...state.counts },
    diagnostics: [...state.diagnostics],
  };
}

/** A page of the session's connection records with the policy in force (GET /sessions/{id}/network). */
export function networkResource(sessionId: string, state: NetworkState, page: { records: readonly NumberedRecord[]; next: number | undefined }): NetworkResource {
  return {
    session_id: sessionId,
    network: networkSummary(state),
    records: page.records.map((record) => ({
      seq: record.seq,
      at: record.at,
      host: record.host,
      port: record.port,
      method: record.method ?? null,
      path: record.path ?? null,
      decision: record.decision,
      rule: record.rule ?? null,
      reason: record.reason ?? null,
      intercepted: record.intercepted,
      bytes_up: record.bytesUp,
      bytes_down: record.bytesDown,
      duration_ms: Math.round(record.durationMs),
    })),
    next_after: page.next ?? null,
  };
}

/** The session's contributions per extension (K-8): skills, instruction files, RPC routes, commands. */
function composition(live: HostedSession): SessionResource["composition"] {
  const view = live.session.view;
  const methods = live.session.methods();
  const skillCommands = view.commands.commands.filter((command) => command.skill !== undefined).length;
  return {
    extensions: {
      python: { enabled: true, routes: methods.filter((method) => !method.startsWith("skills.") && !method.startsWith("mcp.")), commands: view.commands.commands.length - skillCommands },
      skills: {
        enabled: view.extensions.skills,
        depends_on: ["python"],
        skills: view.snapshot.skills.length,
        instructions: view.snapshot.instructions.map((file) => file.path),
        routes: methods.filter((method) => method.startsWith("skills.")),
        commands: skillCommands,
      },
      mcp: {
        enabled: live.session.bridge().extensions.includes("mcp"),
        depends_on: ["python"],
        routes: methods.filter((method) => method.startsWith("mcp.")),
        servers: live.session.mcp.servers().map(({ name, origin, status, tools, diagnostics }) => ({ name, origin, status, tools, diagnostics })),
      },
    },
  };
}

/** The answer to POST /sessions: the session, and how an external kernel reaches it (K-13) or a relay its kernel (K-14). */
export function createdSession(live: HostedSession, rpc: KernelBridge | undefined, relay?: RelayTarget): CreatedSession {
  return {
    ...sessionResource(live),
    ...(rpc === undefined ? {} : { rpc: bridgeJson(rpc) as BridgeResource }),
    ...(relay === undefined ? {} : { relay: { ...relay.addresses, kernel_pid: relay.pid } }),
  };
}

/** One kernel output. A traceback loses its terminal colours: the kernel's own copy keeps them for terminals. */
export function outputResource(msgType: string, content: unknown): OutputResource {
  const record = { ...(content as Record<string, OutputResource["content"][string]>) };
  if (msgType === "error" && Array.isArray(record.traceback)) record.traceback = record.traceback.map((line) => (typeof line === "string" ? stripAnsi(line) : line));
  return { msg_type: msgType, content: record };
}

/** The answer to POST /sessions/{id}/execute: how the cell ended and the outputs the answer's bounds kept. */
export function executeAnswer(executionId: string, reply: ExecuteReply, outputs: OutputsAnswer, pages: readonly string[] = [], images: ExecuteImages = NO_IMAGES): ExecuteAnswer {
  // Kernels say "aborted"; older message specs spell it "abort".
  const status = reply.status === "abort" ? "aborted" : reply.status;
  return { execution_id: executionId, status, execution_count: "execution_count" in reply ? (reply.execution_count ?? null) : null, ...outputs, ...images, pages: [...pages] };
}

/** The images fields of an execute answer. */
export interface ExecuteImages {
  readonly images: ExecuteAnswer["images"];
  readonly image_notes: readonly string[];
}

const NO_IMAGES: ExecuteImages = { images: [], image_notes: [] };

/** What a reload changed (K-7). */
export function reloadAnswer(result: ReloadResult): ReloadAnswer {
  return { revision: result.revision, previous_revision: result.previousRevision, added: result.added, removed: result.removed, failed: result.failed, skills: result.skills, mcp: result.mcp };
}

/** The management catalog (D-3) with whether the session's files changed since it discovered them. */
export function catalogResource(catalog: ManagementCatalog, needsReload: boolean): CatalogResource {
  return { revision: catalog.revision, needs_reload: needsReload, skills: catalog.skills, instructions: catalog.instructions, diagnostics: catalog.diagnostics };
}

/** One settings file: where, its revision, and its content as the file holds it. */
export function settingsFileResource(target: SettingsTarget, snapshot: SettingsSnapshot): SettingsFileResource {
  return { scope: target.scope as SettingsFileResource["scope"], file: target.file, revision: snapshot.revision, settings: snapshot.settings };
}

/** The record of one admitted input (O-1). */
export function receiptResource(receipt: Receipt): ReceiptResource {
  return { operation_id: receipt.operationId, session_id: receipt.sessionId, turn_id: receipt.turnId, type: receipt.type, admitted_at: receipt.admittedAt };
}

function outcomeResource(outcome: TurnOutcome): TurnResource["outcome"] {
  if (outcome.state === "committed") return { state: "committed", result: outcome.result ?? "completed", reply: outcome.reply ?? null, error: outcome.error ?? null, usage: outcome.usage ?? null };
  if (outcome.state === "cancelled") return { state: "cancelled", reason: outcome.reason ?? null };
  return { state: "abandoned", reason: outcome.reason };
}

/** One turn, as GET /operations/{id} and the stream's transcript messages show it. */
export function turnResource(turn: Turn): TurnResource {
  return {
    turn_id: turn.turnId,
    operation_id: turn.operationId,
    session_id: turn.sessionId,
    visible_text: turn.visibleText,
    model_input: turn.modelInput,
    state: turn.state,
    outcome: turn.outcome === undefined ? null : outcomeResource(turn.outcome),
    created_at: new Date(turn.createdAt).toISOString(),
    updated_at: new Date(turn.updatedAt).toISOString(),
  };
}

/** An admitted input: its receipt, where its delivery stands, and its turn. */
export function operationResource(found: Extract<OperationLookup, { found: true }>): OperationResource {
  return { operation_id: found.receipt.operationId, delivery: found.delivery, receipt: receiptResource(found.receipt), turn: turnResource(found.turn) };
}

/** GET /health: the daemon's process, its open sessions and spares, and its log's counts. */
export function healthResource(sessions: number, spares: readonly SpareStatus[], log: LogStats | null): HealthResource {
  return { ok: true, pid: process.pid, started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(), sessions, spares, log };
}

/** A page of a session's transcript: `limit` rows after `after`; `next_after` is set when more may follow. */
export function transcriptPage(sessionId: string, rows: readonly StoredRow[], limit: number): TranscriptPage {
  return { session_id: sessionId, rows: rows.map((row) => rowResource(sessionId, row)), next_after: rows.length === limit ? rows.at(-1)!.seq : null };
}

/**
 * One stored transcript row as HTTP and the stream carry it: the stored row is its wire shape
 * (this signature keeps the two one shape), an output row's images with the URL of their bytes.
 */
export function rowResource(sessionId: string, row: StoredRow): TranscriptRowResource {
  if (row.kind !== "output") return row;
  const { images, ...rest } = row;
  return images === undefined ? rest : { ...rest, images: images.map((image) => ({ ...image, url: imageUrl(sessionId, image.id) })) };
}

/** Where the bytes of the image `imageId` of a session are: GET, with the token. */
export function imageUrl(sessionId: string, imageId: string): string {
  return `/sessions/${sessionId}/images/${imageId}`;
}

/** The message a session's stream sends for one of its events. */
export function streamMessage(live: HostedSession, event: StreamEvent): StreamMessage {
  switch (event.type) {
    case "status":
      return { type: "status", session_id: live.id, kernel: kernelResource(live, event.kernel), reason: event.reason ?? null, revision: event.revision };
    case "output":
      return { type: "output", session_id: live.id, execution_id: event.executionId, ...outputResource(event.output.header.msg_type, event.output.content) };
    case "row":
      return { type: "row", session_id: live.id, row: rowResource(live.id, event.row) };
    case "text":
      return { type: "text", session_id: live.id, turn_id: event.turnId, delta: event.delta };
    case "transcript":
      return { type: "transcript", session_id: live.id, turn: turnResource(event.turn) };
    case "network": {
      const { host, port, reason, hint, count, text } = event.notice;
      return { type: "network", session_id: live.id, host, port, reason, hint, count, text };
    }
  }
}

/** A closed session a resume can start from, as `GET /sessions?closed=resumable` lists it. */
export function resumableResource(session: ResumableSession): ResumableSessionResource {
  return { id: session.id, workspace: session.workspace, closed_at: session.closedAt, checkpointed_at: session.checkpointedAt };
}
