/**
 * Runs a session's admitted turns one at a time, in admission order (O-3), in the daemon and in an
 * embedded chat alike: it takes the oldest waiting turn, runs it with the model the settings name
 * at that moment, saves the conversation, and records how the turn ended.
 */
import type { ModelAdapter } from "../model/index.js";
import type { Prompts, ToolMode } from "./context.js";
import type { ConversationStore } from "./conversation.js";
import { ImageRefusal } from "./images.js";
import { TURN_INTERRUPT_TIMEOUT_MS } from "./limits.js";
import type { StoredRow } from "./rows.js";
import { runTurn, type TurnEnd, type TurnRequest } from "./runner.js";
import type { TurnHost } from "./tools/index.js";

/** Where admitted turns wait, and where their ends are recorded. */
export interface TurnQueue {
  /** The oldest waiting turn, now marked running; undefined when none waits. */
  take(): TurnRequest | undefined;
  /** Records how a taken turn ended. */
  finish(turnId: string, end: TurnEnd): void;
}

/** The model a turn runs with. */
export interface TurnModel {
  readonly adapter: ModelAdapter;
  readonly mode: ToolMode;
  readonly contextTokens: number;
  /** `model.images` (I-2): false sends a note instead of a cell's images; true when unset. */
  readonly images?: boolean;
}

export interface TurnWorkerOptions {
  readonly sessionId: string;
  readonly host: TurnHost;
  readonly queue: TurnQueue;
  readonly conversations: ConversationStore;
  readonly prompts: Prompts;
  /** The model for the next turn, from the settings now; throws ModelError "config" when none is usable. */
  model(): Promise<TurnModel>;
  /** Every row as it is stored. */
  onRow(row: StoredRow): void;
  /** The model's prose as it streams. */
  onText?(turnId: string, delta: string): void;
}

export class TurnWorker {
  private draining: Promise<void> | undefined;
  private current: { turnId: string; controller: AbortController; ended: Promise<void> } | undefined;
  private closed = false;
  /** The session's memory that its endpoint refused images (I-2): it outlives the turn that learned it. */
  private readonly imageRefusal = new ImageRefusal();

  constructor(private readonly options: TurnWorkerOptions) {}

  /** The id of the turn running now, if any. */
  get running(): string | undefined {
    return this.current?.turnId;
  }

  /** Starts working through the queue unless already at it; returns when the queue is empty. */
  kick(): Promise<void> {
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
    return this.draining;
  }

  /**
   * Ends the running turn as interrupted (its model request is aborted and its cell interrupted);
   * resolves true once it ended (or TURN_INTERRUPT_TIMEOUT_MS passed), false when none ran.
   */
  async interrupt(): Promise<boolean> {
    const current = this.current;
    if (current === undefined) return false;
    current.controller.abort();
    await Promise.race([current.ended, new Promise((resolve) => setTimeout(resolve, TURN_INTERRUPT_TIMEOUT_MS).unref())]);
    return true;
  }

  /** Interrupts the running turn and takes no more. */
  async close(): Promise<void> {
    this.closed = true;
    await this.interrupt();
    await this.draining;
  }

  private async drain(): Promise<void> {
    for (let next = this.take(); next !== undefined; next = this.take()) await this.runOne(next);
  }

  private take(): TurnRequest | undefined {
    return this.closed ? undefined : this.options.queue.take();
  }

  private async runOne(request: TurnRequest): Promise<void> {
    const controller = new AbortController();
    let ended!: () => void;
    this.current = { turnId: request.turnId, controller, ended: new Promise<void>((resolve) => (ended = resolve)) };
    const { options } = this;
    const emit = (row: Parameters<ConversationStore["appendRow"]>[2]) => options.onRow(options.conversations.appendRow(options.sessionId, request.turnId, row));
    let end: TurnEnd;
    try {
      const model = await options.model();
      const done = await runTurn(request, options.conversations.load(options.sessionId), {
        ...model, prompts: options.prompts, host: options.host, emit, imageRefusal: this.imageRefusal,
        ...(options.onText ? { onText: (delta: string) => options.onText!(request.turnId, delta) } : {}),
      }, controller.signal);
      options.conversations.save(options.sessionId, done.state);
      end = done.end;
      if (end.usage !== undefined) options.host.usage?.record(end.usage);
    } catch (error) {
      // Only the model's setup can fail before the turn runs (no settings, no key): the input stays in the conversation, the turn fails with the reason.
      const message = error instanceof Error ? error.message : String(error);
      const state = options.conversations.load(options.sessionId);
      options.conversations.save(options.sessionId, { ...state, turns: [...state.turns, { turn_id: request.turnId, messages: [{ role: "user", content: request.modelInput }] }] });
      emit({ kind: "user", text: request.visibleText });
      emit({ kind: "error", text: message });
      end = { result: "failed", error: message };
    } finally {
      this.current = undefined;
      ended();
    }
    options.queue.finish(request.turnId, end);
  }
}
