import { rm } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MAX_QUEUED_INPUTS, newOperationId } from "../../src/operations/index.js";
import { call, openStream } from "./support/daemon.js";
import { poll } from "../support/poll.js";
import { inProcessDaemonSession } from "../support/daemonSession.js";
import { writeSkill } from "../support/skills.js";

const shared = inProcessDaemonSession({ demoSkill: "Merge the inputs." });
const DAY_MS = 24 * 60 * 60 * 1000;

const post = (body: unknown, session = shared.sessionId) => call(shared.daemon, "POST", `/sessions/${session}/events`, body);

describe("O-1 operation ids and receipts", () => {
  it("admits a message with 202 and its receipt; an identical replay gets the identical answer; a changed body gets 409", async () => {
    const operationId = newOperationId();
    const first = await post({ operation_id: operationId, type: "message", text: "hello" });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ operation_id: operationId, session_id: shared.sessionId, turn_id: expect.any(String), type: "message", admitted_at: expect.any(String) });
    const replay = await post({ type: "message", text: "  hello ", operation_id: operationId.toUpperCase() });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    const changed = await post({ operation_id: operationId, type: "message", text: "hello again" });
    expect(changed.status).toBe(409);
    expect(changed.headers.get("content-type")).toBe("application/problem+json");
    expect(changed.body).toMatchObject({ code: "operation_conflict", status: 409, operation_id: operationId });
    const op = await call(shared.daemon, "GET", `/operations/${operationId}`);
    expect(op.body).toEqual({
      operation_id: operationId,
      receipt: first.body,
      delivery: "pending",
      turn: {
        turn_id: first.body.turn_id, operation_id: operationId, session_id: shared.sessionId, visible_text: "hello", model_input: "hello",
        state: "pending", outcome: null, created_at: first.body.admitted_at, updated_at: first.body.admitted_at,
      },
    });
  });

  it("mints an operation id for an input that has none and returns it in the receipt", async () => {
    const admitted = await post({ type: "message", text: "no id of my own" });
    expect(admitted.status).toBe(202);
    expect(admitted.body.operation_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await call(shared.daemon, "GET", `/operations/${admitted.body.operation_id}`)).body.turn.visible_text).toBe("no id of my own");
  });

  it("refuses bad, expired and future ids, unknown sessions and malformed inputs with their codes, naming the field", async () => {
    expect((await post({ operation_id: "not-a-uuid", type: "message", text: "x" })).body).toMatchObject({ status: 400, code: "invalid_operation_id" });
    expect((await post({ operation_id: newOperationId(Date.now() - 8 * DAY_MS), type: "message", text: "x" })).body).toMatchObject({ status: 410, code: "operation_expired" });
    expect((await post({ operation_id: newOperationId(Date.now() + 10 * 60_000), type: "message", text: "x" })).body).toMatchObject({ status: 400, code: "operation_future" });
    expect((await post({ operation_id: newOperationId(), type: "message", text: "x", extra: 1 })).body).toMatchObject({ status: 400, code: "invalid_body", field: "extra" });
    expect((await post({ operationId: newOperationId(), type: "message", text: "x" })).body).toMatchObject({ status: 400, code: "invalid_body", field: "operationId" });
    expect((await post({ operation_id: newOperationId(), type: "message", text: "   " })).body).toMatchObject({ status: 400, code: "invalid_body", field: "text" });
    expect((await post({ operation_id: newOperationId(), type: "shout", text: "x" })).body).toMatchObject({ status: 400, code: "invalid_body", field: "type" });
    expect((await post({ operation_id: newOperationId(), type: "command", command: "/demo now", arguments: "" })).body).toMatchObject({ status: 400, code: "invalid_body", field: "command" });
    expect((await post({ operation_id: newOperationId(), type: "command", command: "/nope", arguments: "" })).body).toMatchObject({ status: 404, code: "command_not_found" });
    expect((await post({ operation_id: newOperationId(), type: "message", text: "x" }, "nope")).body).toMatchObject({ status: 404, code: "session_not_found" });
    expect((await post([1, 2])).body).toMatchObject({ status: 400, code: "invalid_body" });
    expect((await call(shared.daemon, "GET", `/operations/${newOperationId()}`)).body).toMatchObject({ status: 404, code: "operation_not_found" });
    expect((await call(shared.daemon, "GET", `/operations/${newOperationId(Date.now() - 8 * DAY_MS)}`)).body).toMatchObject({ status: 410, code: "operation_expired" });
  });

  it("a command for a skill that is switched off says it is off and where, not \"no command\"", async () => {
    const catalog = `/sessions/${shared.sessionId}/catalog`;
    const revision = async () => `"${(await call(shared.daemon, "GET", catalog)).body.revision}"`;
    expect((await call(shared.daemon, "PATCH", catalog, { off: ["demo"] }, { "if-match": await revision() })).status).toBe(200);
    const session = await post({ operation_id: newOperationId(), type: "command", command: "/demo", arguments: "" });
    expect(session.body).toMatchObject({ status: 404, code: "command_not_found" });
    expect(session.body.detail).toMatch(/^\/demo is the skill demo, which is off for this session \(.*Skills panel turns it back on\) \(session \w+\)$/);
    expect((await call(shared.daemon, "PATCH", catalog, { clear: ["demo"] }, { "if-match": await revision() })).status).toBe(200);
    const settings = await call(shared.daemon, "GET", "/settings");
    expect((await call(shared.daemon, "PATCH", "/settings", { scope: "global", skills: { off: ["demo"] } }, { "if-match": `"${settings.body.global.revision}"` })).status).toBe(200);
    try {
      const global = await post({ operation_id: newOperationId(), type: "command", command: "/demo", arguments: "" });
      expect(global.body.detail).toContain("/demo is the skill demo, which is off in the global settings; `albedo skills on demo` turns it back on");
    } finally {
      const now = await call(shared.daemon, "GET", "/settings");
      await call(shared.daemon, "PATCH", "/settings", { scope: "global", skills: { clear: ["demo"] } }, { "if-match": `"${now.body.global.revision}"` });
    }
    expect((await post({ operation_id: newOperationId(), type: "command", command: "/nope", arguments: "" })).body.detail).toMatch(/^no command \/nope in this session; see \/help \(session \w+\)$/);
  });

  it("mints the operation id when the client sends none (the answer carries it); a command's arguments may be left out", async () => {
    const minted = await post({ type: "message", text: "no id" });
    expect(minted.status).toBe(202);
    expect(minted.body.operation_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await call(shared.daemon, "GET", `/operations/${minted.body.operation_id}`)).body).toMatchObject({ turn: { visible_text: "no id" } });
    const reload = await post({ type: "command", command: "/reload" });
    expect(reload.status).toBe(202);
    const done = (await call(shared.daemon, "GET", `/operations/${reload.body.operation_id}`)).body;
    expect(done).toMatchObject({ turn: { visible_text: "/reload", state: "committed" } });
  });

  it(`holds at most ${MAX_QUEUED_INPUTS} waiting inputs per session (429 queue_full)`, async () => {
    const db = new Database(join(shared.dirs.state, "albedo.db"), { readonly: true });
    const waiting = () => (db.prepare("SELECT COUNT(*) AS n FROM turns WHERE session_id = ? AND state = 'pending'").get(shared.sessionId) as { n: number }).n;
    try {
      while (waiting() < MAX_QUEUED_INPUTS) expect((await post({ operation_id: newOperationId(), type: "message", text: `m${waiting()}` })).status).toBe(202);
      const full = await post({ operation_id: newOperationId(), type: "message", text: "one too many" });
      expect(full.body).toMatchObject({ status: 429, code: "queue_full" });
      expect(waiting()).toBe(MAX_QUEUED_INPUTS);
    } finally {
      db.close();
    }
  });
});

describe("C-6 user activation through the events route", () => {
  it("stores the prepared activation: transcript shows the slash text, the model input a JSON block; the turn stays pending", async () => {
    const other = (await call(shared.daemon, "POST", "/sessions", { workspace: shared.dirs.workspace })).body.id as string;
    const stream = await openStream(shared.daemon, other);
    try {
      const operationId = newOperationId();
      const body = { operation_id: operationId, type: "command", command: "/demo", arguments: "  merge these  files " };
      const admitted = await post(body, other);
      expect(admitted.status).toBe(202);
      const op = (await call(shared.daemon, "GET", `/operations/${operationId}`)).body;
      expect(op.turn.visible_text).toBe("/demo merge these  files");
      expect(JSON.parse(op.turn.model_input)).toEqual({
        skill_activation: {
          command: "/demo",
          name: "demo",
          source: join(shared.dirs.workspace, ".agents", "skills", "demo", "SKILL.md"),
          arguments: "merge these  files",
          instructions: "Merge the inputs.",
        },
      });
      expect(op).toMatchObject({ delivery: "pending", turn: { state: "pending" } });
      await poll(() => stream.events.some((e) => e.type === "transcript"), { what: "a transcript event" });
      expect(stream.events.find((e) => e.type === "transcript")).toMatchObject({ session_id: other, turn: { operation_id: operationId, visible_text: "/demo merge these  files", state: "pending", outcome: null } });

      // The receipt lookup comes before any other check: with the skill gone, the retry still gets its 202.
      await rm(join(shared.dirs.workspace, ".agents", "skills", "demo"), { recursive: true });
      const reloaded = await call(shared.daemon, "POST", `/sessions/${other}/reload`);
      expect(reloaded.body.removed).toEqual(["demo"]);
      expect(await post(body, other)).toMatchObject({ status: 202, body: admitted.body });
      expect((await post({ ...body, operation_id: newOperationId() }, other)).body).toMatchObject({ code: "command_not_found" });
      writeSkill(join(shared.dirs.workspace, ".agents", "skills"), "demo", { body: "Merge the inputs.\n" });

      // A built-in runs at once; its turn records the result as a JSON value, not as JSON text.
      const reloadOp = newOperationId();
      expect((await post({ operation_id: reloadOp, type: "command", command: "/reload", arguments: "session" }, other)).status).toBe(202);
      const reloadTurn = (await call(shared.daemon, "GET", `/operations/${reloadOp}`)).body;
      expect(reloadTurn).toMatchObject({ delivery: "committed", turn: { state: "committed", visible_text: "/reload session" } });
      expect(reloadTurn.turn.outcome).toMatchObject({ state: "committed", reply: { added: ["demo"], removed: [] } });
      await poll(() => stream.events.some((e) => e.type === "transcript" && (e.turn as { state: string }).state === "committed"), { what: "the committed transcript row" });
      const badTarget = newOperationId();
      await post({ operation_id: badTarget, type: "command", command: "/reload", arguments: "kernel" }, other);
      expect((await call(shared.daemon, "GET", `/operations/${badTarget}`)).body).toMatchObject({ delivery: "cancelled", turn: { state: "cancelled", outcome: { state: "cancelled", reason: expect.stringContaining("kernel") } } });
    } finally {
      await stream.close();
      await call(shared.daemon, "DELETE", `/sessions/${other}`);
    }
  });
});
