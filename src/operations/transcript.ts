/**
 * The transcript rows (O-9) and conversations of sessions, in the operations database beside the
 * receipts: rows are appended in order per session, a conversation is saved whole after each turn.
 * Values are JSON; their shapes belong to the turn loop, which reads back what it wrote.
 */
import type Database from "better-sqlite3";
import type { JsonValue } from "../json/index.js";

/** A row's own fields: a JSON object (its `kind` and what that kind carries). */
export type RowFields = { readonly [key: string]: JsonValue };

/** Where a stored row stands: its turn, its place in the session's transcript (from 1), when it was written (ms since the epoch). */
export interface RowPlace {
  readonly turn_id: string;
  readonly seq: number;
  readonly at: number;
}

/** A row as stored and read back: its own fields with its place beside them, one object from the append to the wire. */
export type TranscriptEntry<Row extends RowFields = RowFields> = Row & RowPlace;

export class TranscriptTable {
  private readonly insert: Database.Statement;
  private readonly last: Database.Statement;
  private readonly page: Database.Statement;
  private readonly loadState: Database.Statement;
  private readonly saveState: Database.Statement;

  constructor(private readonly db: Database.Database, private readonly now: () => number) {
    this.insert = db.prepare("INSERT INTO transcript (session_id, seq, turn_id, row_json, at_ms) VALUES (?, ?, ?, ?, ?)");
    this.last = db.prepare("SELECT COALESCE(MAX(seq), 0) AS seq FROM transcript WHERE session_id = ?");
    this.page = db.prepare("SELECT seq, turn_id, row_json, at_ms FROM transcript WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?");
    this.loadState = db.prepare("SELECT state_json FROM conversations WHERE session_id = ?");
    this.saveState = db.prepare(
      "INSERT INTO conversations (session_id, state_json, updated_at_ms) VALUES (?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET state_json = excluded.state_json, updated_at_ms = excluded.updated_at_ms",
    );
  }

  /** Appends one row of `turnId` to the session's transcript; returns it as stored, the same object a read gives back. */
  append<Row extends RowFields>(sessionId: string, turnId: string, row: Row): TranscriptEntry<Row> {
    return this.db
      .transaction((): TranscriptEntry<Row> => {
        const seq = (this.last.get(sessionId) as { seq: number }).seq + 1;
        const at = this.now();
        this.insert.run(sessionId, seq, turnId, JSON.stringify(row), at);
        return { ...row, turn_id: turnId, seq, at };
      })
      .immediate();
  }

  /** Rows after `after`, oldest first, at most `limit`. */
  rows(sessionId: string, after: number, limit: number): TranscriptEntry[] {
    const found = this.page.all(sessionId, after, limit) as { seq: number; turn_id: string; row_json: string; at_ms: number }[];
    return found.map((row) => ({ ...(JSON.parse(row.row_json) as RowFields), turn_id: row.turn_id, seq: row.seq, at: row.at_ms }));
  }

  /** The session's conversation as last saved, or undefined. */
  conversation(sessionId: string): JsonValue | undefined {
    const row = this.loadState.get(sessionId) as { state_json: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.state_json) as JsonValue);
  }

  saveConversation(sessionId: string, state: JsonValue): void {
    this.saveState.run(sessionId, JSON.stringify(state), this.now());
  }
}
