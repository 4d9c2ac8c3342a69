import type Database from "better-sqlite3";
import { AppError } from "../errors/index.js";
import { openDatabase, type ConnectionOptions } from "./dbFile.js";
import { checkNewOperation, lookupReceipt, normaliseId, recordAdmission, type AdmitResult, type Receipt } from "./admission.js";
import type { AdmitInput, ReplayCandidate } from "./input.js";
import { OPERATIONS_BUSY_TIMEOUT_MS, RECEIPT_TTL_MS } from "./limits.js";
import { migrate } from "./schema.js";
import { TranscriptTable } from "./transcript.js";
import { ALLOWED_FROM, deliveryOf, TURN_COLUMNS, turnFromRow, type DeliveryStatus, type Turn, type TurnOutcome, type TurnRow } from "./turns.js";
import { parseUuidV7 } from "./uuidv7.js";

export interface OperationsStoreOptions {
  /** The clock (Unix ms); tests inject one. */
  readonly now?: () => number;
  /** Hears the text of every SQL statement run (better-sqlite3's `verbose`); tests count them. */
  readonly trace?: (sql: string) => void;
}

function connectionOptions({ trace }: OperationsStoreOptions): ConnectionOptions {
  return trace === undefined ? { timeout: OPERATIONS_BUSY_TIMEOUT_MS } : { timeout: OPERATIONS_BUSY_TIMEOUT_MS, verbose: (sql: unknown) => trace(String(sql)) };
}

/** What `getOperation` knows about an id. */
export type OperationLookup =
  | {
      readonly found: true;
      readonly receipt: Receipt;
      readonly delivery: DeliveryStatus;
      readonly turn: Turn;
    }
  | { readonly found: false; readonly reason: "not_found" | "expired" };

/** Counts from restart recovery (O-2): the turns found running or queued, now abandoned. */
export interface RecoveryReport {
  /** Turns that were running when the previous process died. */
  readonly running: number;
  /** Turns that were still waiting: their sessions ended with the previous process, so none will run them. */
  readonly queued: number;
}

/** Why recovery abandoned a turn, by the state it found it in. */
const ABANDONED_BECAUSE = {
  running: "the runtime restarted while this turn was running",
  pending: "the runtime restarted before this turn ran, and its session ended with it; send the input again to a new session",
} as const;

/** The durable record of admitted inputs, their receipts and their turns: one SQLite file in WAL mode. */
export class OperationsStore {
  /** Transcript rows and conversations (O-9), in the same file and transactions' reach as the receipts. */
  readonly transcript: TranscriptTable;

  private constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {
    this.transcript = new TranscriptTable(db, now);
  }

  /**
   * Opens (creating whole, mode 0600, and migrating as needed) the database at `file`. Throws
   * DatabaseFileError for a file that is empty or not a database, and the error as is for I/O
   * failures or a newer schema.
   */
  static open(file: string, options: OperationsStoreOptions = {}): OperationsStore {
    const db = openDatabase(file, connectionOptions(options), (opened) => {
      opened.pragma("journal_mode = WAL");
      // FULL: a receipt must survive power loss once the 202 is sent, not only a process crash.
      opened.pragma("synchronous = FULL");
      opened.pragma("foreign_keys = ON");
      migrate(opened);
    });
    return new OperationsStore(db, options.now ?? Date.now);
  }

  /**
   * Admits one input for a session (O-1): a known id answers from its receipt before any check;
   * otherwise the id's time and the queue bound are checked and receipt, input and turn are
   * written in one transaction. The input's shape is trusted: the daemon parsed it at its
   * boundary. Returns the answer; refusals are values.
   */
  admit(sessionId: string, input: AdmitInput): AdmitResult {
    return this.db
      .transaction((): AdmitResult => {
        const now = this.now();
        return lookupReceipt(this.db, sessionId, input, now) ?? checkNewOperation(this.db, sessionId, input, now) ?? recordAdmission(this.db, sessionId, input, now);
      })
      .immediate();
  }

  /** The stored answer for an already admitted id (same as `admit` would give), or undefined; writes nothing and checks nothing else. */
  replay(sessionId: string, candidate: ReplayCandidate): AdmitResult | undefined {
    return lookupReceipt(this.db, sessionId, candidate, this.now());
  }

  /** The receipt, delivery status and turn of an operation; expired once its id is older than RECEIPT_TTL_MS. */
  getOperation(operationId: string): OperationLookup {
    const id = normaliseId(operationId);
    const idTime = parseUuidV7(id);
    if (idTime === undefined) return { found: false, reason: "not_found" };
    if (idTime < this.now() - RECEIPT_TTL_MS) return { found: false, reason: "expired" };
    const receipt = this.db.prepare("SELECT receipt_json FROM receipts WHERE operation_id = ?").get(id) as { receipt_json: string } | undefined;
    const row = this.db.prepare(`SELECT ${TURN_COLUMNS} FROM turns WHERE operation_id = ?`).get(id) as TurnRow | undefined;
    if (receipt === undefined || row === undefined) return { found: false, reason: "not_found" };
    const turn = turnFromRow(row);
    return { found: true, receipt: JSON.parse(receipt.receipt_json) as Receipt, delivery: deliveryOf(turn.state), turn };
  }

  /** One turn, or undefined. */
  getTurn(turnId: string): Turn | undefined {
    const row = this.db.prepare(`SELECT ${TURN_COLUMNS} FROM turns WHERE turn_id = ?`).get(turnId) as TurnRow | undefined;
    return row === undefined ? undefined : turnFromRow(row);
  }

  /** A session's turns in admission order. */
  listTurns(sessionId: string): Turn[] {
    const rows = this.db.prepare(`SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? ORDER BY seq`).all(sessionId) as TurnRow[];
    return rows.map(turnFromRow);
  }

  /** The oldest pending turn of a session, or undefined when none waits. */
  nextPendingTurn(sessionId: string): Turn | undefined {
    const row = this.db.prepare(`SELECT ${TURN_COLUMNS} FROM turns WHERE session_id = ? AND state = 'pending' ORDER BY seq LIMIT 1`).get(sessionId) as
      | TurnRow
      | undefined;
    return row === undefined ? undefined : turnFromRow(row);
  }

  /** Moves a pending turn to running; returns it as stored. Throws AppError "not_found" or "conflict" (data.state) otherwise. */
  markRunning(turnId: string): Turn {
    return this.transition(turnId, "running", null);
  }

  /** Ends a turn: committed (from running) or cancelled (from pending or running); returns it as stored. Throws like markRunning. */
  complete(turnId: string, outcome: Exclude<TurnOutcome, { state: "abandoned" }>): Turn {
    return this.transition(turnId, outcome.state, JSON.stringify(outcome));
  }

  /**
   * After a restart (O-2): every turn left running or pending becomes abandoned, with the reason.
   * Sessions do not outlive their process, so no session will run a pending turn any more.
   * Returns the counts.
   */
  recoverAfterRestart(): RecoveryReport {
    return this.db
      .transaction((): RecoveryReport => {
        const abandon = (state: keyof typeof ABANDONED_BECAUSE): number => {
          const outcome = JSON.stringify({ state: "abandoned", reason: ABANDONED_BECAUSE[state] } satisfies TurnOutcome);
          return this.db.prepare("UPDATE turns SET state = 'abandoned', outcome_json = ?, updated_at_ms = ? WHERE state = ?").run(outcome, this.now(), state).changes;
        };
        return { running: abandon("running"), queued: abandon("pending") };
      })
      .immediate();
  }

  /** Deletes receipts whose id is older than RECEIPT_TTL_MS at `now`; returns how many. Inputs and turns stay as history. */
  pruneExpired(now: number = this.now()): number {
    return this.db.prepare("DELETE FROM receipts WHERE id_time_ms < ?").run(now - RECEIPT_TTL_MS).changes;
  }

  /** Closes the database; the store is unusable afterwards. */
  close(): void {
    this.db.close();
  }

  /** One statement moves the turn and returns it; only a refused move reads the turn, to say why. */
  private transition(turnId: string, next: keyof typeof ALLOWED_FROM, outcomeJson: string | null): Turn {
    const from = ALLOWED_FROM[next];
    const moved = this.db
      .prepare(`UPDATE turns SET state = ?, outcome_json = ?, updated_at_ms = ? WHERE turn_id = ? AND state IN (${from.map(() => "?").join(", ")}) RETURNING ${TURN_COLUMNS}`)
      .get(next, outcomeJson, this.now(), turnId, ...from) as TurnRow | undefined;
    if (moved !== undefined) return turnFromRow(moved);
    const turn = this.getTurn(turnId);
    if (turn === undefined) throw new AppError("not_found", `no turn ${turnId}`, { turnId });
    throw new AppError("conflict", `turn ${turnId} is ${turn.state}; it cannot become ${next}`, { turnId, state: turn.state });
  }
}
