import { randomUUID } from "node:crypto";
import type WebSocket from "ws";
import { newOperationId } from "../operations/index.js";
import type { DaemonClient } from "./client.js";

/** One output of an execution as the daemon sends it. */
export interface RemoteOutput {
  readonly msg_type: string;
  readonly content: unknown;
}

/** What a slash command typed into a remote session came to. */
export type RemoteCommandOutcome =
  | { readonly kind: "result"; readonly value: unknown }
  | { readonly kind: "failed"; readonly reason: string }
  | { readonly kind: "submitted"; readonly turnId: string; readonly state: string };

/** The parts of the session resource a client uses. */
export interface RemoteSessionResource {
  readonly id: string;
  readonly kernel: { readonly status: string; readonly pid: number | null };
  readonly revision: string;
  readonly needs_reload: boolean;
  readonly composition: { readonly extensions: { readonly skills: { readonly skills: number } } };
  readonly commands: readonly { readonly name: string; readonly description: string; readonly submits_turn: boolean }[];
}

interface ExecuteResponse {
  readonly status: string;
  readonly outputs: readonly RemoteOutput[];
  readonly pages?: readonly string[];
}

/** A session held by a daemon, driven over its HTTP API and stream (D-5: the console's attached mode). */
export class RemoteSession {
  private readonly listeners = new Map<string, (output: RemoteOutput) => void>();

  private constructor(
    private readonly client: DaemonClient,
    private resourceValue: RemoteSessionResource,
    private readonly stream: WebSocket,
  ) {
    stream.on("message", (data) => this.onEvent(String(data)));
  }

  /** Opens a session on the daemon and attaches to its stream. Throws DaemonError when the daemon refuses. */
  static async open(client: DaemonClient, workspace: string): Promise<RemoteSession> {
    const resource = await client.call<RemoteSessionResource>("POST", "/sessions", { workspace });
    try {
      return new RemoteSession(client, resource, await client.openStream(resource.id));
    } catch (error) {
      await client.send("DELETE", `/sessions/${resource.id}`).catch(() => undefined);
      throw error;
    }
  }

  get id(): string {
    return this.resourceValue.id;
  }

  /** The session resource as last read. */
  get resource(): RemoteSessionResource {
    return this.resourceValue;
  }

  private onEvent(text: string): void {
    const event = JSON.parse(text) as { type?: string; execution_id?: string; msg_type?: string; content?: unknown };
    if (event.type !== "output" || event.execution_id === undefined) return;
    this.listeners.get(event.execution_id)?.({ msg_type: event.msg_type ?? "", content: event.content });
  }

  /**
   * Runs code; outputs reach `onOutput` from the stream as they happen, and any the stream had not
   * delivered by the time the reply came are taken from the reply. Returns the reply status and
   * the pages the kernel answered `obj?` with.
   */
  async execute(code: string, onOutput: (output: RemoteOutput) => void): Promise<{ status: string; pages: readonly string[] }> {
    const executionId = randomUUID();
    let seen = 0;
    this.listeners.set(executionId, (output) => {
      seen += 1;
      onOutput(output);
    });
    try {
      const reply = await this.client.call<ExecuteResponse>("POST", `/sessions/${this.id}/execute`, { code, execution_id: executionId });
      for (const output of reply.outputs.slice(seen)) onOutput(output);
      return { status: reply.status, pages: reply.pages ?? [] };
    } finally {
      this.listeners.delete(executionId);
    }
  }

  /** Submits a typed slash command through the events route with a fresh operation id (C-6) and reports what it came to. */
  async command(name: string, text: string): Promise<RemoteCommandOutcome> {
    const operationId = newOperationId();
    await this.client.call("POST", `/sessions/${this.id}/events`, { operationId, type: "command", command: name, arguments: text });
    const found = await this.client.call<{ turn: { turnId: string; state: string; outcome?: { state: string; reply?: string; reason?: string } } }>(
      "GET",
      `/operations/${operationId}`,
    );
    await this.refresh();
    const { turn } = found;
    if (turn.outcome?.state === "committed") return { kind: "result", value: turn.outcome.reply === undefined ? null : JSON.parse(turn.outcome.reply) };
    if (turn.outcome?.state === "cancelled") return { kind: "failed", reason: turn.outcome.reason ?? "cancelled" };
    return { kind: "submitted", turnId: turn.turnId, state: turn.state };
  }

  /** The session's management catalog (D-3): every candidate with its status and diagnostics. */
  catalog(): Promise<{ readonly skills: readonly { readonly name: string; readonly status: string }[] }> {
    return this.client.call("GET", `/sessions/${this.id}/catalog`);
  }

  /** Rereads the session resource. */
  async refresh(): Promise<RemoteSessionResource> {
    this.resourceValue = await this.client.call<RemoteSessionResource>("GET", `/sessions/${this.id}`);
    return this.resourceValue;
  }

  async interrupt(): Promise<void> {
    await this.client.call("POST", `/sessions/${this.id}/interrupt`);
  }

  /** Ends the stream and closes the session on the daemon. */
  async close(): Promise<void> {
    this.stream.close();
    await this.client.send("DELETE", `/sessions/${this.id}`).catch(() => undefined);
  }
}
