/**
 * What a session's conversation carries from turn to turn: the model-facing messages of earlier
 * turns (a compacted stretch becomes one summary turn) and the skills loaded so far, whose text
 * stays in context. Plain data, saved whole after each turn by a ConversationStore. Its images are
 * references to the session's image store; a request reads their bytes when it is built.
 */
import type { ImageRef } from "../images/index.js";
import type { ChatMessage, MessageImage } from "../model/index.js";
import type { StoredRow, TranscriptRow } from "./rows.js";

/**
 * An image as a conversation keeps it (I-2): a reference to the image store, or the image itself
 * (base64) when the store did not keep it (past its quota, or no store) and in conversations saved
 * before images went by reference, whose step images a user message carried.
 */
export type ConversationImage = ImageRef | MessageImage;

/** One message of a conversation, its images as the conversation keeps them. */
export type ConversationMessage = ChatMessage<ConversationImage>;

/** The messages one turn added to the conversation, in order (its input first). */
export interface TurnMessages {
  readonly turn_id: string;
  readonly messages: readonly ConversationMessage[];
  /** True for the one turn that stands for a compacted stretch of older turns. */
  readonly summary?: boolean;
}

/** A skill whose text the model has received in this conversation (O-6). */
export interface LoadedSkill {
  readonly name: string;
  /** The installed skill directory: relative paths in its text resolve against it. */
  readonly dir: string;
  /** The real skill directory, which the `read` tool may read in. */
  readonly resolved_dir: string;
  /** SKILL.md size in bytes, as the catalog block counts it. */
  readonly bytes: number;
  /** The text the model received, kept verbatim through compaction (O-8). */
  readonly body: string;
}

export interface ConversationState {
  readonly turns: readonly TurnMessages[];
  readonly loaded: readonly LoadedSkill[];
}

export const EMPTY_CONVERSATION: ConversationState = Object.freeze({ turns: [], loaded: [] });

/** Where a session's conversation and transcript live: the daemon's SQLite file, or memory for an embedded chat. */
export interface ConversationStore {
  /** The conversation as saved after the session's last turn. */
  load(sessionId: string): ConversationState;
  save(sessionId: string, state: ConversationState): void;
  /** Appends one transcript row of `turnId`; returns it as stored (with its sequence number and time). */
  appendRow(sessionId: string, turnId: string, row: TranscriptRow): StoredRow;
  /** Rows after sequence number `after`, oldest first, at most `limit`. */
  rows(sessionId: string, after: number, limit: number): StoredRow[];
}

/** A ConversationStore in memory: for embedded chats, and for tests of the turn loop. */
export class MemoryConversationStore implements ConversationStore {
  private readonly states = new Map<string, ConversationState>();
  private readonly transcript = new Map<string, StoredRow[]>();

  load(sessionId: string): ConversationState {
    return this.states.get(sessionId) ?? EMPTY_CONVERSATION;
  }

  save(sessionId: string, state: ConversationState): void {
    this.states.set(sessionId, state);
  }

  appendRow(sessionId: string, turnId: string, row: TranscriptRow): StoredRow {
    const rows = this.transcript.get(sessionId) ?? [];
    const stored = { ...row, turn_id: turnId, seq: rows.length + 1, at: Date.now() } as StoredRow;
    rows.push(stored);
    this.transcript.set(sessionId, rows);
    return stored;
  }

  rows(sessionId: string, after: number, limit: number): StoredRow[] {
    return (this.transcript.get(sessionId) ?? []).filter((row) => row.seq > after).slice(0, limit);
  }
}
