import type { JsonValue } from "../json/index.js";
import type { UsageTotals } from "../model/index.js";
import { activationBlock, type SlashActivation } from "../skills/index.js";

/** The states of a turn; only pending → running → committed, and pending/running → cancelled, are allowed. */
export type TurnState = "pending" | "running" | "committed" | "cancelled" | "abandoned";

/** Where an admitted input stands as seen by its sender (O-1). */
export type DeliveryStatus = "pending" | "committed" | "cancelled";

/** How a model turn ended (O-3); a built-in run after admission counts as completed. */
export type TurnResult = "completed" | "failed" | "interrupted";

/** How a turn ended; "abandoned" is set only by restart recovery (O-2). */
export type TurnOutcome =
  | { readonly state: "committed"; readonly result?: TurnResult; readonly reply?: JsonValue; readonly error?: string; readonly usage?: UsageTotals }
  | { readonly state: "cancelled"; readonly reason?: string }
  | { readonly state: "abandoned"; readonly reason: string };

/** The one turn an admitted input yields. */
export interface Turn {
  readonly turnId: string;
  readonly operationId: string;
  readonly sessionId: string;
  /** What the transcript shows: the message, or the slash text as typed (C-6). */
  readonly visibleText: string;
  /** What the model is given: the message, or the JSON activation block of a skill (C-6), made from `activation`. */
  readonly modelInput: string;
  /** For a user slash activation: the command and the activation prepared at admission, stored once with the turn (C-6). */
  readonly activation?: SlashActivation;
  readonly state: TurnState;
  readonly outcome?: TurnOutcome;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A turn row as SQLite returns it. */
export interface TurnRow {
  readonly turn_id: string;
  readonly operation_id: string;
  readonly session_id: string;
  readonly visible_text: string;
  readonly activation_json: string | null;
  readonly state: TurnState;
  readonly outcome_json: string | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/** The columns a Turn is read from, in every SELECT and RETURNING of the turns table. */
export const TURN_COLUMNS = "turn_id, operation_id, session_id, visible_text, activation_json, state, outcome_json, created_at_ms, updated_at_ms";

/** The turn of a row; a turn without an activation gives the model its text as the transcript shows it. */
export function turnFromRow(row: TurnRow): Turn {
  const activation = row.activation_json === null ? undefined : (JSON.parse(row.activation_json) as SlashActivation);
  const turn = {
    turnId: row.turn_id,
    operationId: row.operation_id,
    sessionId: row.session_id,
    visibleText: row.visible_text,
    modelInput: activation === undefined ? row.visible_text : activationBlock(activation),
    ...(activation === undefined ? {} : { activation }),
    state: row.state,
    createdAt: row.created_at_ms,
    updatedAt: row.updated_at_ms,
  };
  return row.outcome_json === null ? turn : { ...turn, outcome: JSON.parse(row.outcome_json) as TurnOutcome };
}

/** The delivery status a sender sees for a turn in `state`. */
export function deliveryOf(state: TurnState): DeliveryStatus {
  if (state === "committed") return "committed";
  if (state === "cancelled" || state === "abandoned") return "cancelled";
  return "pending";
}

/** The states a turn may leave for `next` (complete / cancel). */
export const ALLOWED_FROM: Readonly<Record<"running" | "committed" | "cancelled", readonly TurnState[]>> = {
  running: ["pending"],
  committed: ["running"],
  cancelled: ["pending", "running"],
};
