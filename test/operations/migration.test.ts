import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { MIGRATIONS, newOperationId, SCHEMA_VERSION } from "../../src/operations/index.js";
import { storeFixture, T0 } from "./support/fixtures.js";

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
