import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { isAppError } from "../../src/errors/index.js";
import { newOperationId, RECEIPT_TTL_MS, SCHEMA_VERSION, type AdmitResult } from "../../src/operations/index.js";
import { demoCommand, message, storeFixture, T0 } from "./support/fixtures.js";

const fixture = storeFixture();
afterEach(() => fixture.close());

function turnIdOf(result: AdmitResult): string {
  if (!result.ok) throw new Error(`refused: ${result.code}: ${result.detail}`);
  return result.receipt.turnId;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("C-6 user activation turns", () => {
  it("shows the slash text and gives the model a JSON activation block with exact arguments, source and instructions", () => {
    const { store } = fixture.open();
    const input = demoCommand("  merge   these ", "Step 1: read.\n</skill> not a delimiter\"}");
    const turn = store.getTurn(turnIdOf(store.admit("s1", input)))!;
    expect(turn.visibleText).toBe("/demo merge   these");
    expect(turn.state).toBe("pending");
    expect(JSON.parse(turn.modelInput)).toEqual({
      skill_activation: {
        command: "/demo",
        name: "demo",
        source: "/ws/.albedo/skills/demo/SKILL.md",
        arguments: "merge   these",
        instructions: "Step 1: read.\n</skill> not a delimiter\"}",
      },
    });
    expect(store.listTurns("s1")).toHaveLength(1);
  });

  it("keeps the activation stored at admission: a retry after the skill changed replays and rereads nothing", () => {
    const { store } = fixture.open();
    const id = newOperationId(T0);
    const first = store.admit("s1", demoCommand("x", "old instructions", id));
    const retry = store.admit("s1", demoCommand("x", "new instructions", id));
    expect(retry).toEqual({ ...first, replayed: true });
    expect(store.getTurn(turnIdOf(first))?.activation?.activation.instructions).toBe("old instructions");
    expect(store.listTurns("s1")).toHaveLength(1);
  });

  it("stores the activation once, with its turn: the input row keeps the body as sent and no copy of the block is kept", () => {
    const { store, file } = fixture.open();
    const input = demoCommand("go", "Step 1: read.");
    const turn = store.getTurn(turnIdOf(store.admit("s1", input)))!;
    expect(turn.activation).toEqual({ command: "/demo", activation: input.activation });
    const raw = new Database(file, { readonly: true });
    try {
      const stored = raw.prepare("SELECT i.input_json, t.* FROM inputs i JOIN turns t USING (operation_id)").get() as Record<string, string>;
      expect(JSON.parse(stored.input_json!)).toEqual({ operationId: input.operationId, type: "command", command: "/demo", arguments: "go" });
      expect(JSON.parse(stored.activation_json!)).toEqual({ command: "/demo", activation: input.activation });
      expect(Object.values(stored).filter((value) => typeof value === "string" && value.includes("Step 1: read."))).toHaveLength(1);
    } finally {
      raw.close();
    }
  });

  it("gives a message turn its text as both transcript and model input", () => {
    const { store } = fixture.open();
    const turn = store.getTurn(turnIdOf(store.admit("s1", message("  hi there  "))))!;
    expect([turn.visibleText, turn.modelInput]).toEqual(["hi there", "hi there"]);
  });
});

describe("O-1 operation status", () => {
  it("reports delivery pending → committed with the turn outcome", () => {
    const { store } = fixture.open();
    const input = message("hello");
    const turnId = turnIdOf(store.admit("s1", input));
    expect(store.getOperation(input.operationId)).toMatchObject({ found: true, delivery: "pending", turn: { state: "pending" } });
    store.markRunning(turnId);
    expect(store.getOperation(input.operationId)).toMatchObject({ delivery: "pending", turn: { state: "running" } });
    store.complete(turnId, { state: "committed", reply: { added: ["demo"], skills: 1 } });
    expect(store.getOperation(input.operationId)).toMatchObject({
      found: true,
      receipt: { operationId: input.operationId, turnId },
      delivery: "committed",
      turn: { state: "committed", outcome: { state: "committed", reply: { added: ["demo"], skills: 1 } } },
    });
  });

  it("reports a turn cancelled before it ran as delivery cancelled", () => {
    const { store } = fixture.open();
    const input = message("never mind");
    store.complete(turnIdOf(store.admit("s1", input)), { state: "cancelled", reason: "user" });
    expect(store.getOperation(input.operationId)).toMatchObject({ delivery: "cancelled", turn: { state: "cancelled" } });
  });

  it("refuses transitions a turn cannot make, and unknown turns", () => {
    const { store } = fixture.open();
    const turnId = turnIdOf(store.admit("s1", message("x")));
    expect(isAppError(thrown(() => store.complete(turnId, { state: "committed" })), "conflict")).toBe(true);
    store.markRunning(turnId);
    expect(isAppError(thrown(() => store.markRunning(turnId)), "conflict")).toBe(true);
    store.complete(turnId, { state: "committed" });
    expect(isAppError(thrown(() => store.complete(turnId, { state: "cancelled" })), "conflict")).toBe(true);
    expect(isAppError(thrown(() => store.markRunning("no-such-turn")), "not_found")).toBe(true);
  });

  it("answers not_found for unknown or non-v7 ids and expired past RECEIPT_TTL_MS", () => {
    const { store } = fixture.open();
    const input = message("hello");
    store.admit("s1", input);
    expect(store.getOperation(newOperationId(T0))).toEqual({ found: false, reason: "not_found" });
    expect(store.getOperation("nonsense")).toEqual({ found: false, reason: "not_found" });
    fixture.clock.now = T0 + RECEIPT_TTL_MS + 1;
    expect(store.getOperation(input.operationId)).toEqual({ found: false, reason: "expired" });
  });

  it("prunes receipts older than 7 days, keeps newer ones, and an expired id is never admitted again", () => {
    const { store } = fixture.open();
    const old = message("old", newOperationId(T0));
    const fresh = message("fresh", newOperationId(T0 + 1000));
    store.admit("s1", old);
    store.admit("s1", fresh);
    expect(store.pruneExpired(T0 + RECEIPT_TTL_MS)).toBe(0);
    expect(store.pruneExpired(T0 + RECEIPT_TTL_MS + 1)).toBe(1);
    fixture.clock.now = T0 + RECEIPT_TTL_MS + 1;
    expect(store.admit("s1", old)).toMatchObject({ code: "operation_expired" });
    expect(store.getOperation(fresh.operationId)).toMatchObject({ found: true });
    expect(store.listTurns("s1").map((turn) => turn.visibleText)).toEqual(["old", "fresh"]);
  });
});

describe("O-1 receipt, input and turn in one transaction", () => {
  it("writes nothing when the last insert fails, and the id stays free", () => {
    const { store, file } = fixture.open();
    const raw = new Database(file);
    try {
      raw.exec("CREATE TRIGGER injected_fault BEFORE INSERT ON turns BEGIN SELECT RAISE(ABORT, 'injected fault'); END");
      const input = demoCommand("x");
      expect(() => store.admit("s1", input)).toThrow(/injected fault/);
      const counts = ["receipts", "inputs", "turns"].map((table) => (raw.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
      expect(counts).toEqual([0, 0, 0]);
      raw.exec("DROP TRIGGER injected_fault");
      expect(store.admit("s1", input)).toMatchObject({ ok: true, replayed: false });
    } finally {
      raw.close();
    }
  });
});

describe("O-1 storage", () => {
  it("uses WAL and records the schema version; reopening migrates nothing twice", () => {
    const { store, file } = fixture.open();
    store.admit("s1", message("kept"));
    store.close();
    const again = fixture.open(file).store;
    expect(again.listTurns("s1")).toHaveLength(1);
    const raw = new Database(file, { readonly: true });
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(raw.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      raw.close();
    }
  });

  it("refuses a database written by a newer schema", () => {
    const { store, file } = fixture.open();
    store.close();
    const raw = new Database(file);
    raw.prepare("UPDATE schema_version SET version = ?").run(SCHEMA_VERSION + 1);
    raw.close();
    expect(() => fixture.open(file)).toThrow(/schema version/);
  });
});
