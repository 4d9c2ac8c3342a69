/**
 * The daemon's side of turns (O-3): one worker per session runs its admitted turns from the
 * operations store, one at a time in admission order; rows and the conversation are stored beside
 * the receipts, and rows, prose and ended turns go to the session's stream as they happen.
 */
import type { JsonValue } from "../json/index.js";
import { retryWhileBusy, STORE_BUSY_RETRY_MS, type OperationsStore, type Turn, type TurnOutcome } from "../operations/index.js";
import type { Session } from "../session/index.js";
import {
  EMPTY_CONVERSATION, loadPrompts, TurnWorker, turnModel,
  type ConversationState, type ConversationStore, type StoredRow, type TranscriptRow, type TurnEnd, type TurnRequest,
} from "../turns/index.js";
import type { StreamEvent } from "./live.js";
import { turnResource } from "./views.js";
import { installDir, isSqliteBusy } from "../platform/index.js";

/** What the daemon does with a session's turns. */
export interface SessionTurns {
  /** Starts running the session's waiting turns, unless already at it. */
  kick(): void;
  /** Ends the running turn as interrupted (its model request and its cell); false when no turn ran. */
  interrupt(): Promise<boolean>;
  /** Interrupts the running turn and runs no more. */
  close(): Promise<void>;
}

/** For sessions that run no turns (route tests with a scripted kernel). */
export const NO_TURNS: SessionTurns = { kick: () => undefined, interrupt: async () => false, close: async () => undefined };

export interface TurnsOptions {
  readonly store: OperationsStore;
  readonly env: NodeJS.ProcessEnv;
  readonly install?: string;
}

/** The turns of `session`, run from `options.store`, reported through `publish`. */
export function storeTurns(session: Session, publish: (event: StreamEvent) => void, options: TurnsOptions): SessionTurns {
  const { store } = options;
  const published = (turnId: string) => publish({ type: "transcript", turn: turnResource(store.getTurn(turnId)!) });
  const worker = new TurnWorker({
    sessionId: session.id,
    host: session,
    queue: {
      take: () => {
        const turn = takeTurn(store, session.id, () => void worker.kick().catch(() => undefined));
        if (turn === undefined) return undefined;
        published(turn.turnId);
        const input = store.getInput(turn.operationId);
        const activation = input?.type === "command" ? input.activation : undefined;
        const request: TurnRequest = { turnId: turn.turnId, visibleText: turn.visibleText, modelInput: turn.modelInput };
        return activation === undefined ? request : { ...request, activation };
      },
      finish: (turnId, end) => recordEnd(store, turnId, outcomeOf(end), published),
    },
    conversations: storeConversations(store),
    prompts: loadPrompts(options.install ?? installDir()),
    model: () => turnModel(session.view.selection.scopes, options.env),
    onRow: (row) => publish({ type: "row", entry: { seq: row.seq, turnId: row.turn_id, row: rowOf(row), at: row.at } }),
    onText: (turnId, delta) => publish({ type: "text", turn_id: turnId, delta }),
    onEnd: (turnId) => published(turnId),
  });
  return {
    kick: () => void worker.kick().catch(() => undefined),
    interrupt: () => worker.interrupt(),
    close: () => worker.close(),
  };
}

/**
 * The session's oldest waiting turn, now marked running; undefined when none waits. While another
 * process holds albedo.db locked it is also undefined, and `again` is called STORE_BUSY_RETRY_MS
 * later: the turn stays pending, and the daemon does not block waiting for it.
 */
function takeTurn(store: OperationsStore, sessionId: string, again: () => void): Turn | undefined {
  try {
    const turn = store.nextPendingTurn(sessionId);
    return turn === undefined ? undefined : store.markRunning(turn.turnId);
  } catch (error) {
    if (!isSqliteBusy(error)) throw error;
    setTimeout(again, STORE_BUSY_RETRY_MS).unref();
    return undefined;
  }
}

/** Stores a turn's end; while another process holds albedo.db locked it keeps trying in the background, then tells the stream. */
function recordEnd(store: OperationsStore, turnId: string, outcome: Exclude<TurnOutcome, { state: "abandoned" }>, published: (turnId: string) => void): void {
  try {
    store.complete(turnId, outcome);
    return;
  } catch (error) {
    if (!isSqliteBusy(error)) throw error;
  }
  // The worker reports the turn as it stands (running); its end reaches the stream once stored. A closed store ends the tries.
  void retryWhileBusy(() => store.complete(turnId, outcome), Number.POSITIVE_INFINITY).then(() => published(turnId), () => undefined);
}

/** How a turn's end is recorded: every model turn commits its input; the result says how it went. */
function outcomeOf(end: TurnEnd): Exclude<TurnOutcome, { state: "abandoned" }> {
  if (end.result === "completed") return { state: "committed", result: "completed", reply: end.reply };
  if (end.result === "failed") return { state: "committed", result: "failed", error: end.error };
  return { state: "committed", result: "interrupted" };
}

/** A stored row without its place (turn, seq, time), which the table keeps in columns. */
function rowOf(row: StoredRow): JsonValue {
  const { turn_id: _turn, seq: _seq, at: _at, ...rest } = row;
  return rest as JsonValue;
}

/** The operations store as the turn loop's conversation store. */
export function storeConversations(store: OperationsStore): ConversationStore {
  return {
    load: (sessionId) => (store.transcript.conversation(sessionId) as ConversationState | undefined) ?? EMPTY_CONVERSATION,
    save: (sessionId, state) => store.transcript.saveConversation(sessionId, state as unknown as JsonValue),
    appendRow: (sessionId, turnId, row: TranscriptRow) => {
      const entry = store.transcript.append(sessionId, turnId, row as JsonValue);
      return { ...row, turn_id: turnId, seq: entry.seq, at: entry.at } as StoredRow;
    },
    rows: (sessionId, after, limit) =>
      store.transcript.rows(sessionId, after, limit).map((entry) => ({ ...(entry.row as object), turn_id: entry.turnId, seq: entry.seq, at: entry.at }) as StoredRow),
  };
}
