import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/index.js";
import { MIGRATIONS, newOperationId, SCHEMA_VERSION } from "../../src/operations/index.js";
import { demoCommand, storeFixture, T0 } from "./support/fixtures.js";

const fixture = storeFixture();
afterEach(() => fixture.close());

/** A database as the first schema left it: one admitted /reload whose turn committed with its reply as JSON text. */
function firstSchemaDatabase(file: string, operationId: string, turnId: string): void {
  const db = new Database(file);
  try {
    db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT");
    db.exec(MIGRATIONS[0]!);
    db.prepare("INSERT INTO schema_version (version) VALUES (1)").run();
    const receipt = { operationId, sessionId: "s1", turnId, type: "command", admittedAt: new Date(T0).toISOString() };
    const key = JSON.stringify({ arguments: "session", command: "/reload", sessionId: "s1", type: "command" });
    db.prepare("INSERT INTO receipts VALUES (?, 's1', ?, 202, ?, ?, ?)").run(operationId, key, JSON.stringify(receipt), T0, T0);
    db.prepare("INSERT INTO inputs (operation_id, session_id, input_json, admitted_at_ms) VALUES (?, 's1', '{}', ?)").run(operationId, T0);
    const outcome = JSON.stringify({ state: "committed", reply: JSON.stringify({ added: ["demo"], skills: 1 }) });
    db.prepare("INSERT INTO turns VALUES (?, ?, 's1', 1, '/reload session', '/reload session', 'committed', ?, ?, ?)").run(turnId, operationId, outcome, T0, T0);
  } finally {
    db.close();
  }
}

describe("O-1 O-2 schema migration", () => {
  it("turns a stored reply held as JSON text into the JSON value, keeps every receipt replayable, and drops the HTTP status", () => {
    const file = join(fixture.dir(), "albedo.db");
    const operationId = newOperationId(T0);
    const turnId = newOperationId(T0);
    firstSchemaDatabase(file, operationId, turnId);
    const { store } = fixture.open(file);
    expect(store.getOperation(operationId)).toMatchObject({
      found: true,
      receipt: { operationId, turnId, sessionId: "s1" },
      turn: { outcome: { state: "committed", reply: { added: ["demo"], skills: 1 } } },
    });
    const replay = store.replay("s1", { operationId, type: "command", command: "/reload", arguments: " session " });
    expect(replay).toMatchObject({ ok: true, replayed: true, receipt: { turnId } });
    const raw = new Database(file, { readonly: true });
    try {
      const columns = (raw.prepare("PRAGMA table_info(receipts)").all() as { name: string }[]).map((column) => column.name);
      expect(columns).not.toContain("status");
      expect(columns).toContain("receipt_json");
      expect(raw.prepare("SELECT version FROM schema_version").get()).toEqual({ version: SCHEMA_VERSION });
    } finally {
      raw.close();
    }
  });
});

/** The block the third schema stored as a command turn's model_input, byte for byte as that release made it. */
function thirdSchemaBlock(command: string, activation: NonNullable<ReturnType<typeof demoCommand>["activation"]>): string {
  const { name, source, arguments: args, instructions } = activation;
  return JSON.stringify({ skill_activation: { command, name, source, arguments: args, instructions } });
}

/** A database as the third schema left it: a pending /demo activation (stored in input_json and as model_input text) and a pending message. */
function thirdSchemaDatabase(file: string, command: ReturnType<typeof demoCommand>, messageId: string): { commandTurn: string; messageTurn: string; block: string } {
  const db = new Database(file);
  const commandTurn = newOperationId(T0);
  const messageTurn = newOperationId(T0);
  const block = thirdSchemaBlock("/demo", command.activation!);
  try {
    db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT");
    for (const migration of MIGRATIONS.slice(0, 3)) db.exec(migration);
    db.prepare("INSERT INTO schema_version (version) VALUES (3)").run();
    const admit = (operationId: string, turnId: string, type: string, key: object, input: object, visible: string, modelInput: string, seq: number) => {
      const receipt = { operationId, sessionId: "s1", turnId, type, admittedAt: new Date(T0).toISOString() };
      db.prepare("INSERT INTO receipts VALUES (?, 's1', ?, ?, ?, ?)").run(operationId, canonicalJson({ sessionId: "s1", ...key }), JSON.stringify(receipt), T0, T0);
      db.prepare("INSERT INTO inputs (seq, operation_id, session_id, input_json, admitted_at_ms) VALUES (?, ?, 's1', ?, ?)").run(seq, operationId, canonicalJson(input), T0);
      db.prepare("INSERT INTO turns VALUES (?, ?, 's1', ?, ?, ?, 'pending', NULL, ?, ?)").run(turnId, operationId, seq, visible, modelInput, T0, T0);
    };
    admit(command.operationId, commandTurn, "command", { type: "command", command: "/demo", arguments: "merge" }, command, "/demo merge", block, 1);
    admit(messageId, messageTurn, "message", { type: "message", text: "hi" }, { operationId: messageId, type: "message", text: "hi" }, "hi", "hi", 2);
  } finally {
    db.close();
  }
  return { commandTurn, messageTurn, block };
}

describe("C-6 O-2 schema migration of a stored activation", () => {
  it("keeps a pending activation once, with its turn: the model input is the block the old release stored, and the turn is handed out with its activation", () => {
    const file = join(fixture.dir(), "albedo.db");
    const command = demoCommand("merge", "Step 1: read.\n</skill> not a delimiter\"}");
    const messageId = newOperationId(T0);
    const old = thirdSchemaDatabase(file, command, messageId);
    const { store } = fixture.open(file);
    expect(store.getTurn(old.commandTurn)).toMatchObject({ visibleText: "/demo merge", modelInput: old.block, activation: { command: "/demo", activation: command.activation } });
    expect(store.getTurn(old.messageTurn)).toMatchObject({ visibleText: "hi", modelInput: "hi" });
    expect(store.getTurn(old.messageTurn)).not.toHaveProperty("activation");
    expect(store.replay("s1", { operationId: command.operationId, type: "command", command: "/demo", arguments: "merge" })).toMatchObject({ ok: true, replayed: true, receipt: { turnId: old.commandTurn } });
    // What the daemon's queue hands the turn loop: the turn as markRunning returned it.
    expect(store.nextPendingTurn("s1")?.turnId).toBe(old.commandTurn);
    expect(store.markRunning(old.commandTurn)).toMatchObject({ state: "running", modelInput: old.block, activation: { command: "/demo", activation: command.activation } });
    const raw = new Database(file, { readonly: true });
    try {
      const columns = (raw.prepare("PRAGMA table_info(turns)").all() as { name: string }[]).map((column) => column.name);
      expect(columns).not.toContain("model_input");
      expect(columns).toContain("activation_json");
      const inputs = (raw.prepare("SELECT input_json FROM inputs ORDER BY seq").all() as { input_json: string }[]).map((row) => JSON.parse(row.input_json));
      expect(inputs).toEqual([{ operationId: command.operationId, type: "command", command: "/demo", arguments: "merge" }, { operationId: messageId, type: "message", text: "hi" }]);
    } finally {
      raw.close();
    }
  });
});
