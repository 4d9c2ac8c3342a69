/**
 * Where `albedo chat` sends its inputs: an embedded runtime (an in-process session, a memory
 * conversation and a turn worker), or a running daemon. Both turn a line into one input — a
 * message, a user slash activation (C-6), or a built-in run at once — and report its rows.
 */
import { randomUUID } from "node:crypto";
import { describeResult, findCommand, parseSlashLine, unknownCommand } from "../commands/index.js";
import type { ModelMode } from "../model/index.js";
import { activationBlock } from "../operations/index.js";
import type { Session } from "../session/index.js";
import type { Activation } from "../skills/index.js";
import { installDir } from "../settings/paths.js";
import { loadPrompts, MemoryConversationStore, TurnWorker, turnModel, type StoredRow, type TurnEnd, type TurnRequest } from "../turns/index.js";

/** What one line became. */
export type ChatResult = { readonly kind: "turn"; readonly end: TurnEnd } | { readonly kind: "builtin"; readonly value: unknown; readonly text: string };

export interface ChatHandlers {
  onRow(row: StoredRow): void;
  onText(delta: string): void;
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
      const request = await turnRequest(session, line);
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
async function turnRequest(session: Session, line: string): Promise<TurnRequest | { value: unknown; text: string }> {
  const text = line.trim();
  const turnId = randomUUID();
  const slash = parseSlashLine(text);
  if (slash === undefined) return { turnId, visibleText: text, modelInput: text };
  const prepared = session.prepare(slash.name, slash.text, "user");
  if (prepared === undefined) throw unknownCommand(slash.name, session.view.commands.commands.map((c) => c.name));
  const result = await prepared.run();
  if (!prepared.command.submitsTurn) return { value: result, text: describeResult(findCommand(session.view.commands, prepared.command.name), result) };
  const activation = result as Activation;
  return { turnId, visibleText: text, modelInput: activationBlock(prepared.command.name, activation), activation };
}
