/**
 * Where `albedo chat` sends its inputs: an embedded runtime (an in-process session, a memory
 * conversation and a turn worker), or a running daemon. Both turn a line into one input — a
 * message, a user slash activation (C-6), or a built-in run at once — and report its rows.
 */
import { randomUUID } from "node:crypto";
import { BUILTIN_COMMANDS, describeResult, findCommand, parseSlashLine, unknownCommand } from "../commands/index.js";
import type { ReceiptResource, RemoteSession, StreamMessage, TurnResource } from "../api/index.js";
import type { ModelMode } from "../model/index.js";
import type { Session } from "../session/index.js";
import { activationBlock, type Activation } from "../skills/index.js";
import { loadPrompts, MemoryConversationStore, TurnWorker, turnModel, type StoredRow, type TurnEnd, type TurnRequest } from "../turns/index.js";
import { installDir } from "../platform/index.js";
import { lostDaemonLine } from "./consoleSession.js";

/** What one line became. */
export type ChatResult = { readonly kind: "turn"; readonly end: TurnEnd } | { readonly kind: "builtin"; readonly value: unknown; readonly text: string };

export interface ChatHandlers {
  onRow(row: StoredRow): void;
  onText(delta: string): void;
  /** The width a built-in's text is laid out for: the person's terminal (TERMINAL_COLUMNS when absent). */
  readonly columns?: number;
}

export interface ChatBackend {
  /** "embedded", or "daemon <url>". */
  readonly where: string;
  /** Slash names for completion. */
  commandNames(): readonly string[];
  /** Submits one line and runs it to its end; rows and prose stream to `handlers` meanwhile. */
  submit(line: string, handlers: ChatHandlers): Promise<ChatResult>;
  /** Ends the running turn (its model request and its cell). */
  interrupt(): Promise<void>;
  close(): Promise<void>;
  /** Settles with the line to show when the daemon holding the session went away; absent for an embedded chat. */
  readonly lost?: Promise<string>;
}

/** A chat on an in-process session: turns run here, the conversation lives in memory for this run. */
export function embeddedChat(session: Session, env: NodeJS.ProcessEnv, mode: ModelMode | undefined): ChatBackend {
  const waiting: TurnRequest[] = [];
  const ends = new Map<string, TurnEnd>();
  let handlers: ChatHandlers | undefined;
  const worker = new TurnWorker({
    sessionId: session.id,
    host: session,
    queue: { take: () => waiting.shift(), finish: (turnId, end) => void ends.set(turnId, end) },
    conversations: new MemoryConversationStore(),
    prompts: loadPrompts(installDir()),
    model: () => turnModel(session.view.selection.scopes, env, mode),
    onRow: (row) => handlers?.onRow(row),
    onText: (_turnId, delta) => handlers?.onText(delta),
  });
  return {
    where: "embedded",
    commandNames: () => session.view.commands.commands.map((command) => command.name),
    async submit(line, sink) {
      const request = await turnRequest(session, line, sink.columns);
      if ("value" in request) return { kind: "builtin", value: request.value, text: request.text };
      handlers = sink;
      waiting.push(request);
      await worker.kick();
      return { kind: "turn", end: ends.get(request.turnId) ?? { result: "failed", error: "the turn did not run" } };
    },
    interrupt: async () => void (await worker.interrupt()),
    async close() {
      await worker.close();
      await session.close();
    },
  };
}

/** The turn a line asks for, or a built-in's result when the line is one (run here and now). */
async function turnRequest(session: Session, line: string, columns: number | undefined): Promise<TurnRequest | { value: unknown; text: string }> {
  const text = line.trim();
  const turnId = randomUUID();
  const slash = parseSlashLine(text);
  if (slash === undefined) return { turnId, visibleText: text, modelInput: text };
  const prepared = session.prepare(slash.name, slash.text, "user");
  if (prepared === undefined) throw unknownCommand(slash.name, session.view.commands.commands.map((c) => c.name));
  const result = await prepared.run();
  if (!prepared.command.submitsTurn) return { value: result, text: describeResult(findCommand(session.view.commands, prepared.command.name), result, columns) };
  const activation = { command: prepared.command.name, activation: result as Activation };
  return { turnId, visibleText: text, modelInput: activationBlock(activation), activation };
}

/**
 * A chat on a session held by a running daemon: the daemon runs the turns (its model, its
 * settings); rows and prose arrive on the session's stream, the turn's end as its transcript
 * message. Built-ins run through the events route and answer at once.
 */
export function daemonChat(remote: RemoteSession, url: string): ChatBackend {
  return {
    where: `daemon ${url}`,
    commandNames: () => remote.resource.commands.map((command) => command.name),
    async submit(line, sink) {
      const text = line.trim();
      const slash = parseSlashLine(text);
      const declared = slash === undefined ? undefined : remote.resource.commands.find((command) => command.name === slash.name);
      if (slash !== undefined && declared !== undefined && !declared.submits_turn) {
        const outcome = await remote.command(slash.name, slash.text);
        if (outcome.kind === "failed") throw new Error(outcome.reason);
        const value = outcome.kind === "result" ? outcome.value : null;
        return { kind: "builtin", value, text: describeResult(findCommand({ revision: "", commands: BUILTIN_COMMANDS }, declared.name), value, sink.columns) };
      }
      return await followTurn(remote, sink, () => remote.admit(slash === undefined ? { type: "message", text } : { type: "command", command: slash.name, arguments: slash.text }));
    },
    interrupt: () => remote.interrupt(),
    close: () => remote.close(),
    lost: remote.lost.then(() => lostDaemonLine("chat", url)),
  };
}

/**
 * Admits an input and follows its turn on the stream to its end. Messages that arrive before the
 * receipt names the turn are held, then replayed: the stream and the answer travel apart.
 */
async function followTurn(remote: RemoteSession, sink: ChatHandlers, admit: () => Promise<ReceiptResource>): Promise<ChatResult> {
  const held: StreamMessage[] = [];
  let turnId: string | undefined;
  let finish!: (end: TurnEnd) => void;
  const ended = new Promise<TurnEnd>((resolve) => (finish = resolve));
  const handle = (message: StreamMessage) => {
    if (turnId === undefined) return void held.push(message);
    if (message.type === "row" && message.row.turn_id === turnId) sink.onRow(message.row);
    else if (message.type === "text" && message.turn_id === turnId) sink.onText(message.delta);
    else if (message.type === "transcript" && message.turn.turn_id === turnId) {
      const end = turnEndOf(message.turn.outcome);
      if (end !== undefined) finish(end);
    }
  };
  const watching = remote.watch(handle);
  try {
    turnId = (await admit()).turn_id;
    for (const message of held.splice(0)) handle(message);
    return { kind: "turn", end: await ended };
  } finally {
    watching.dispose();
  }
}

/** How a turn's outcome reads as a chat result; undefined while it has none. */
function turnEndOf(outcome: TurnResource["outcome"]): TurnEnd | undefined {
  if (outcome === null) return undefined;
  if (outcome.state === "committed") {
    const usage = outcome.usage === null ? {} : { usage: outcome.usage };
    if (outcome.result === "completed") return { result: "completed", reply: typeof outcome.reply === "string" ? outcome.reply : "", ...usage };
    if (outcome.result === "failed") return { result: "failed", error: outcome.error ?? "the turn failed", ...usage };
    return { result: "interrupted", ...usage };
  }
  return { result: "failed", error: outcome.reason ?? `the turn was ${outcome.state}` };
}
