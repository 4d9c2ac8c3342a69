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
  type ConversationState, type ConversationStore, type StoredRow, type TurnEnd,
} from "../turns/index.js";
import type { SessionTurns, StreamEvent } from "./sessionPort.js";
import { installDir, isSqliteBusy } from "../platform/index.js";

export interface TurnsOptions {
  readonly store: OperationsStore;
  readonly env: NodeJS.ProcessEnv;
  readonly install?: string;
}

/**
 * The turns of `session`, run from `options.store`, reported through `publish`: each row as its
 * append returned it, each turn as its markRunning or complete returned it, never read again.
 */
export function storeTurns(session: Session, publish: (event: StreamEvent) => void, options: TurnsOptions): SessionTurns {
  const { store } = options;
  const worker = new TurnWorker({
    sessionId: session.id,
    host: session,
    queue: {
      take: () => {
        const turn = takeTurn(store, session.id, () => void worker.kick().catch(() => undefined));
        if (turn === undefined) return undefined;
        publish({ type: "transcript", turn });
        return turn;
      },
      finish: (turnId, end) => recordEnd(store, turnId, outcomeOf(end), (turn) => publish({ type: "transcript", turn })),
    },
    conversations: storeConversations(store),
    prompts: loadPrompts(options.install ?? installDir()),
    model: () => turnModel(session.view.selection.scopes, options.env),
    onRow: (row) => publish({ type: "row", row }),
    onText: (turnId, delta) => publish({ type: "text", turnId, delta }),
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

/** Stores a turn's end and tells the stream the turn it stored; while another process holds albedo.db locked it keeps trying in the background. */
function recordEnd(store: OperationsStore, turnId: string, outcome: Exclude<TurnOutcome, { state: "abandoned" }>, published: (turn: Turn) => void): void {
  let ended: Turn;
  try {
    ended = store.complete(turnId, outcome);
  } catch (error) {
    if (!isSqliteBusy(error)) throw error;
    // Its end reaches the stream once stored. A closed store ends the tries.
    void retryWhileBusy(() => store.complete(turnId, outcome), Number.POSITIVE_INFINITY).then(published, () => undefined);
    return;
  }
  published(ended);
}

/** How a turn's end is recorded: every model turn commits its input; the result says how it went. */
function outcomeOf(end: TurnEnd): Exclude<TurnOutcome, { state: "abandoned" }> {
  const usage = end.usage === undefined ? {} : { usage: end.usage };
  if (end.result === "completed") return { state: "committed", result: "completed", reply: end.reply, ...usage };
  if (end.result === "failed") return { state: "committed", result: "failed", error: end.error, ...usage };
  return { state: "committed", result: "interrupted", ...usage };
}

/** A page of a session's stored rows: `limit` after `after`, as the turn loop wrote them (their shape is its own). */
export function storedRows(store: OperationsStore, sessionId: string, after: number, limit: number): StoredRow[] {
  return store.transcript.rows(sessionId, after, limit) as unknown as StoredRow[];
}

/** The operations store as the turn loop's conversation store. */
export function storeConversations(store: OperationsStore): ConversationStore {
  return {
    load: (sessionId) => (store.transcript.conversation(sessionId) as ConversationState | undefined) ?? EMPTY_CONVERSATION,
    save: (sessionId, state) => store.transcript.saveConversation(sessionId, state as unknown as JsonValue),
    appendRow: (sessionId, turnId, row) => store.transcript.append(sessionId, turnId, row),
    rows: (sessionId, after, limit) => storedRows(store, sessionId, after, limit),
  };
}
