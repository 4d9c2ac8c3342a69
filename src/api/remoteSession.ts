import { randomUUID } from "node:crypto";
import type WebSocket from "ws";
import type { JsonValue } from "../json/index.js";
import type { NetworkSetting } from "../network/index.js";
import { newOperationId } from "../operations/index.js";
import { API } from "./routes.js";
import type { DaemonClient } from "./client.js";
import type { CatalogResource, OutputResource, ReceiptResource, SessionClient, SessionResource, StreamMessage } from "./resources.js";

/** What a slash command typed into a remote session came to. */
export type RemoteCommandOutcome =
  | { readonly kind: "result"; readonly value: JsonValue }
  | { readonly kind: "failed"; readonly reason: string }
  | { readonly kind: "submitted"; readonly turnId: string; readonly state: string };

/** A session held by a daemon, driven over its HTTP API and stream (D-5: the console's attached mode). */
export class RemoteSession {
  private readonly listeners = new Map<string, (output: OutputResource) => void>();
  private readonly watchers = new Set<(message: StreamMessage) => void>();
  private closing = false;
  /** Settles when the stream ends without close() asking: the daemon stopped, or dropped this session. */
  readonly lost: Promise<void>;

  private constructor(
    private readonly client: DaemonClient,
    private resourceValue: SessionResource,
    private readonly stream: WebSocket,
  ) {
    stream.on("message", (data) => this.onMessage(JSON.parse(String(data)) as StreamMessage));
    this.lost = new Promise((resolve) => stream.once("close", () => (this.closing ? undefined : resolve())));
  }

  /** Opens a session for `who` (the console, a chat) on the daemon and attaches to its stream. Throws DaemonError when the daemon refuses. */
  static async open(client: DaemonClient, workspace: string, who: SessionClient, remote?: { readonly url: string }, resume?: string, network?: NetworkSetting): Promise<RemoteSession> {
    const body = { workspace, client: who, ...(remote ? { remote } : {}), ...(resume !== undefined ? { resume } : {}), ...(network !== undefined ? { network } : {}) };
    const resource = await client.call(API.openSession, { body });
    try {
      return new RemoteSession(client, resource, await client.openStream(resource.id));
    } catch (error) {
      await client.call(API.closeSession, { params: { id: resource.id } }).catch(() => undefined);
      throw error;
    }
  }

  get id(): string {
    return this.resourceValue.id;
  }

  /** The session resource as last read. */
  get resource(): SessionResource {
    return this.resourceValue;
  }

  private onMessage(message: StreamMessage): void {
    for (const watcher of [...this.watchers]) watcher(message);
    if (message.type !== "output") return;
    this.listeners.get(message.execution_id)?.({ msg_type: message.msg_type, content: message.content });
  }

  /** Calls `watcher` with every stream message until disposed. */
  watch(watcher: (message: StreamMessage) => void): { dispose(): void } {
    this.watchers.add(watcher);
    return { dispose: () => this.watchers.delete(watcher) };
  }

  /** Admits one input through the events route with a fresh operation id (O-1); returns its receipt. */
  admit(input: { type: "message"; text: string } | { type: "command"; command: string; arguments: string }): Promise<ReceiptResource> {
    return this.client.call(API.postEvent, { params: { id: this.id }, body: { operation_id: newOperationId(), ...input } });
  }

  /**
   * Runs code; outputs reach `onOutput` from the stream as they happen, and any the stream had not
   * delivered by the time the reply came are taken from the reply. Returns the reply status and
   * the pages the kernel answered `obj?` with.
   */
  async execute(code: string, onOutput: (output: OutputResource) => void): Promise<{ status: string; pages: readonly string[] }> {
    const executionId = randomUUID();
    let seen = 0;
    this.listeners.set(executionId, (output) => {
      seen += 1;
      onOutput(output);
    });
    try {
      const answer = await this.client.call(API.execute, { params: { id: this.id }, body: { code, execution_id: executionId } });
      for (const output of answer.outputs.slice(seen)) onOutput(output);
      return { status: answer.status, pages: answer.pages };
    } finally {
      this.listeners.delete(executionId);
    }
  }

  /** Submits a typed slash command through the events route with a fresh operation id (C-6) and reports what it came to. */
  async command(name: string, text: string): Promise<RemoteCommandOutcome> {
    const operationId = newOperationId();
    await this.client.call(API.postEvent, { params: { id: this.id }, body: { operation_id: operationId, type: "command", command: name, arguments: text } });
    const { turn } = await this.client.call(API.getOperation, { params: { id: operationId } });
    // A command that submits a turn is the model's to answer, however far its turn got already.
    const submitsTurn = this.resource.commands.find((command) => command.name === turn.visible_text.split(" ")[0])?.submits_turn === true;
    await this.refresh();
    if (submitsTurn) return { kind: "submitted", turnId: turn.turn_id, state: turn.state };
    if (turn.outcome?.state === "committed") return { kind: "result", value: turn.outcome.reply as JsonValue };
    if (turn.outcome?.state === "cancelled") return { kind: "failed", reason: turn.outcome.reason ?? "cancelled" };
    return { kind: "submitted", turnId: turn.turn_id, state: turn.state };
  }

  /** The session's management catalog (D-3): every candidate with its status and diagnostics. */
  catalog(): Promise<CatalogResource> {
    return this.client.call(API.getCatalog, { params: { id: this.id } });
  }

  /** Rereads the session resource. */
  async refresh(): Promise<SessionResource> {
    this.resourceValue = await this.client.call(API.getSession, { params: { id: this.id } });
    return this.resourceValue;
  }

  async interrupt(): Promise<void> {
    await this.client.call(API.interrupt, { params: { id: this.id } });
  }

  /** Ends the stream and closes the session on the daemon. */
  async close(): Promise<void> {
    this.closing = true;
    this.stream.close();
    await this.client.call(API.closeSession, { params: { id: this.id } }).catch(() => undefined);
  }
}
