import type Database from "better-sqlite3";
import { refusal, type AdmissionRefusal } from "./errors.js";
import { requestKey, storedInput, turnTexts, type AdmitInput, type ReplayCandidate } from "./input.js";
import { MAX_QUEUED_INPUTS, OPERATION_FUTURE_SKEW_MS, RECEIPT_TTL_MS } from "./limits.js";
import { newOperationId, parseUuidV7 } from "./uuidv7.js";

/** What an admission records and answers with; stored with the input and given back, unchanged, on every replay. */
export interface Receipt {
  readonly operationId: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly type: "message" | "command";
  /** ISO 8601 time of the admission. */
  readonly admittedAt: string;
}

export interface Admission {
  readonly ok: true;
  readonly receipt: Receipt;
  /** True when this answer is the stored one for an earlier identical request. */
  readonly replayed: boolean;
}

export type AdmitResult = Admission | AdmissionRefusal;

interface ReceiptRow {
  readonly request_key: string;
  readonly receipt_json: string;
  readonly id_time_ms: number;
}

/** The id as stored: UUIDs compare case-insensitively, so lowercase. */
export function normaliseId(id: string): string {
  return id.trim().toLowerCase();
}

/**
 * The stored answer when `input.operationId` was admitted before and its receipt is still kept:
 * the original receipt for the same request, operation_conflict for a different one; undefined
 * when there is no live receipt. Runs before any validation of the input (O-1).
 */
export function lookupReceipt(db: Database.Database, sessionId: string, input: ReplayCandidate | AdmitInput, now: number): AdmitResult | undefined {
  const operationId = normaliseId(input.operationId);
  const row = db.prepare("SELECT request_key, receipt_json, id_time_ms FROM receipts WHERE operation_id = ?").get(operationId) as ReceiptRow | undefined;
  // A receipt past retention counts as gone even before pruning, so answers never depend on when pruning ran.
  if (row === undefined || row.id_time_ms < now - RECEIPT_TTL_MS) return undefined;
  if (row.request_key !== requestKey(sessionId, input)) {
    return refusal("operation_conflict", `operation ${operationId} was already admitted with a different body; the first one stands`, operationId);
  }
  return { ok: true, receipt: JSON.parse(row.receipt_json) as Receipt, replayed: true };
}

/**
 * Checks a new (unknown) operation in O-1 order: the time its id carries, then the queue bound.
 * The input's shape is the caller's to have checked. Returns the refusal, or undefined when it may be admitted.
 */
export function checkNewOperation(db: Database.Database, sessionId: string, input: AdmitInput, now: number): AdmissionRefusal | undefined {
  const operationId = normaliseId(input.operationId);
  const idTime = parseUuidV7(operationId);
  if (idTime === undefined) {
    return refusal("invalid_operation_id", `operation_id must be a UUIDv7 (version 7, RFC 9562 variant), got ${JSON.stringify(operationId)}`);
  }
  if (idTime < now - RECEIPT_TTL_MS) {
    return refusal("operation_expired", `operation ${operationId} is from ${iso(idTime)}, older than ${RECEIPT_TTL_MS} ms (RECEIPT_TTL_MS)`, operationId);
  }
  if (idTime > now + OPERATION_FUTURE_SKEW_MS) {
    return refusal("operation_future", `operation ${operationId} is from ${iso(idTime)}, more than ${OPERATION_FUTURE_SKEW_MS} ms (OPERATION_FUTURE_SKEW_MS) ahead`, operationId);
  }
  // A command with no activation is a built-in the daemon runs at once: it never waits behind model turns.
  const queues = input.type === "message" || input.activation !== undefined;
  const waiting = queues ? (db.prepare("SELECT COUNT(*) AS n FROM turns WHERE session_id = ? AND state = 'pending'").get(sessionId) as { n: number }).n : 0;
  if (waiting >= MAX_QUEUED_INPUTS) {
    return refusal("queue_full", `session ${sessionId} already has ${waiting} waiting inputs; at most ${MAX_QUEUED_INPUTS} (MAX_QUEUED_INPUTS)`, operationId);
  }
  return undefined;
}

/** Writes receipt, input and turn of a checked input (the caller holds the transaction); returns the admission. */
export function recordAdmission(db: Database.Database, sessionId: string, input: AdmitInput, now: number): Admission {
  const operationId = normaliseId(input.operationId);
  const turnId = newOperationId(now);
  const receipt: Receipt = { operationId, sessionId, turnId, type: input.type, admittedAt: iso(now) };
  db.prepare("INSERT INTO receipts (operation_id, session_id, request_key, receipt_json, id_time_ms, admitted_at_ms) VALUES (?, ?, ?, ?, ?, ?)").run(
    operationId,
    sessionId,
    requestKey(sessionId, input),
    JSON.stringify(receipt),
    parseUuidV7(operationId)!,
    now,
  );
  const { seq } = db
    .prepare("INSERT INTO inputs (operation_id, session_id, input_json, admitted_at_ms) VALUES (?, ?, ?, ?) RETURNING seq")
    .get(operationId, sessionId, storedInput(input, operationId), now) as { seq: number };
  const texts = turnTexts(input);
  const activation = texts.activation === undefined ? null : JSON.stringify(texts.activation);
  db.prepare(
    `INSERT INTO turns (turn_id, operation_id, session_id, seq, visible_text, activation_json, state, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
  ).run(turnId, operationId, sessionId, seq, texts.visibleText, activation, now, now);
  return { ok: true, receipt, replayed: false };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
