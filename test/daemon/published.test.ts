/**
 * What a session's stream is handed while a turn runs from the operations store: the turn as
 * markRunning and complete returned it and each row as its append returned it, never read back.
 * A real database file, its statements counted with better-sqlite3's `verbose` hook.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StreamEvent } from "../../src/daemon/sessionPort.js";
import { storedRows, storeTurns } from "../../src/daemon/turns.js";
import { newOperationId, OperationsStore } from "../../src/operations/index.js";
import type { Session } from "../../src/session/index.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-published-");
const stores: OperationsStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  temps.cleanup();
});

/** Just enough of a session for a turn that ends before it reaches the model: its settings name none. */
const session = { id: "s1", view: { selection: { scopes: {} } } } as unknown as Session;

describe("O-3 O-9 D-2 a turn's stream events are what the store returned", () => {
  it("publishes the running and the ended turn and every row without reading a turn back", async () => {
    const statements: string[] = [];
    const store = OperationsStore.open(join(temps.make(), "albedo.db"), { trace: (sql) => statements.push(sql) });
    stores.push(store);
    const admitted = store.admit("s1", { operationId: newOperationId(), type: "message", text: "hello" });
    if (!admitted.ok) throw new Error(`refused: ${admitted.code}`);
    const events: StreamEvent[] = [];
    const turns = storeTurns(session, (event) => events.push(event), { store, env: {} });
    statements.length = 0;
    turns.kick();
    await poll(() => events.some((event) => event.type === "transcript" && event.turn.state === "committed"), { what: "the turn to end" });
    await turns.close();

    // Before: each change read the turn before and after its UPDATE, and the stream read it a third time.
    expect(statements.filter((sql) => /^SELECT .* FROM turns WHERE turn_id = /.test(sql))).toEqual([]);
    expect(statements.filter((sql) => sql.startsWith("UPDATE turns"))).toHaveLength(2);
    expect(events.map((event) => event.type)).toEqual(["transcript", "row", "row", "transcript"]);
    const [running, , , ended] = events as [Extract<StreamEvent, { type: "transcript" }>, StreamEvent, StreamEvent, Extract<StreamEvent, { type: "transcript" }>];
    expect(running.turn).toMatchObject({ turnId: admitted.receipt.turnId, state: "running", visibleText: "hello", modelInput: "hello" });
    expect(ended.turn).toEqual(store.getTurn(admitted.receipt.turnId));
    expect(ended.turn.outcome).toMatchObject({ state: "committed", result: "failed" });
    const rows = events.flatMap((event) => (event.type === "row" ? [event.row] : []));
    expect(rows).toEqual(storedRows(store, "s1", 0, 10));
    expect(rows.map((row) => [row.kind, row.seq, row.turn_id])).toEqual([["user", 1, admitted.receipt.turnId], ["error", 2, admitted.receipt.turnId]]);
  });
});
