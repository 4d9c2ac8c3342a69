import { rm } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_QUEUED_INPUTS, newOperationId } from "../../src/operations/index.js";
import { call, killDaemon, makeDirs, openStream, startDaemon, waitFor, writeSkill, type DaemonProcess, type Dirs } from "./support/daemon.js";

let dirs: Dirs;
let daemon: DaemonProcess;
let sessionId: string;
const DAY_MS = 24 * 60 * 60 * 1000;

beforeAll(async () => {
  dirs = await makeDirs();
  await writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", "Merge the inputs.");
  daemon = await startDaemon(dirs);
  sessionId = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id;
}, 120_000);

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
});

const post = (body: unknown, session = sessionId) => call(daemon, "POST", `/sessions/${session}/events`, body);

describe("O-1 operation ids and receipts", () => {
  it("admits a message with 202; an identical replay gets the identical answer; a changed body gets 409", async () => {
    const operationId = newOperationId();
    const first = await post({ operationId, type: "message", text: "hello" });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ operationId, sessionId, type: "message" });
    const replay = await post({ type: "message", text: "  hello ", operationId: operationId.toUpperCase() });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual(first.body);
    const changed = await post({ operationId, type: "message", text: "hello again" });
    expect(changed.status).toBe(409);
    expect(changed.headers.get("content-type")).toBe("application/problem+json");
    expect(changed.body).toMatchObject({ code: "operation_conflict", status: 409, operationId });
    const op = await call(daemon, "GET", `/operations/${operationId}`);
    expect(op.body).toMatchObject({ operationId, receipt: { status: 202, body: first.body }, delivery: "pending", turn: { state: "pending", visibleText: "hello" } });
  });

  it("refuses bad, expired and future ids, unknown sessions and malformed inputs with their codes", async () => {
    expect((await post({ operationId: "not-a-uuid", type: "message", text: "x" })).body).toMatchObject({ status: 400, code: "invalid_operation_id" });
    expect((await post({ operationId: newOperationId(Date.now() - 8 * DAY_MS), type: "message", text: "x" })).body).toMatchObject({ status: 410, code: "operation_expired" });
    expect((await post({ operationId: newOperationId(Date.now() + 10 * 60_000), type: "message", text: "x" })).body).toMatchObject({ status: 400, code: "operation_future" });
    expect((await post({ operationId: newOperationId(), type: "message", text: "x", extra: 1 })).body).toMatchObject({ status: 400, code: "invalid_input" });
    expect((await post({ operationId: newOperationId(), type: "message", text: "   " })).body).toMatchObject({ status: 400, code: "invalid_input" });
    expect((await post({ operationId: newOperationId(), type: "command", command: "/nope", arguments: "" })).body).toMatchObject({ status: 404, code: "command_not_found" });
    expect((await post({ operationId: newOperationId(), type: "message", text: "x" }, "nope")).body).toMatchObject({ status: 404, code: "session_not_found" });
    expect((await post([1, 2])).body).toMatchObject({ status: 400, code: "invalid_body" });
    expect((await call(daemon, "GET", `/operations/${newOperationId()}`)).body).toMatchObject({ status: 404, code: "operation_not_found" });
    expect((await call(daemon, "GET", `/operations/${newOperationId(Date.now() - 8 * DAY_MS)}`)).body).toMatchObject({ status: 410, code: "operation_expired" });
  });

  it("mints the operation id when the client sends none (the answer carries it); a command's arguments may be left out", async () => {
    const minted = await post({ type: "message", text: "no id" });
    expect(minted.status).toBe(202);
    expect(minted.body.operationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await call(daemon, "GET", `/operations/${minted.body.operationId}`)).body).toMatchObject({ turn: { visibleText: "no id" } });
    const reload = await post({ type: "command", command: "/reload" });
    expect(reload.status).toBe(202);
    const done = (await call(daemon, "GET", `/operations/${reload.body.operationId}`)).body;
    expect(done).toMatchObject({ turn: { visibleText: "/reload", state: "committed" } });
  });

  it(`holds at most ${MAX_QUEUED_INPUTS} waiting inputs per session (429 queue_full)`, async () => {
    const db = new Database(join(dirs.state, "albedo.db"), { readonly: true });
    const waiting = () => (db.prepare("SELECT COUNT(*) AS n FROM turns WHERE session_id = ? AND state = 'pending'").get(sessionId) as { n: number }).n;
    try {
      while (waiting() < MAX_QUEUED_INPUTS) expect((await post({ operationId: newOperationId(), type: "message", text: `m${waiting()}` })).status).toBe(202);
      const full = await post({ operationId: newOperationId(), type: "message", text: "one too many" });
      expect(full.body).toMatchObject({ status: 429, code: "queue_full" });
      expect(waiting()).toBe(MAX_QUEUED_INPUTS);
    } finally {
      db.close();
    }
  });
});

describe("C-6 user activation through the events route", () => {
  it("stores the prepared activation: transcript shows the slash text, the model input a JSON block; the turn stays pending", async () => {
    const other = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const stream = await openStream(daemon, other);
    try {
      const operationId = newOperationId();
      const body = { operationId, type: "command", command: "/demo", arguments: "  merge these  files " };
      const admitted = await post(body, other);
      expect(admitted.status).toBe(202);
      const op = (await call(daemon, "GET", `/operations/${operationId}`)).body;
      expect(op.turn.visibleText).toBe("/demo merge these  files");
      expect(JSON.parse(op.turn.modelInput)).toEqual({
        skill_activation: {
          command: "/demo",
          name: "demo",
          source: join(dirs.workspace, ".agents", "skills", "demo", "SKILL.md"),
          arguments: "merge these  files",
          instructions: "Merge the inputs.",
        },
      });
      expect(op).toMatchObject({ delivery: "pending", turn: { state: "pending" } });
      await waitFor(() => stream.events.some((e) => e.type === "transcript"), "a transcript event");
      expect(stream.events.find((e) => e.type === "transcript")).toMatchObject({ turn: { operationId, visibleText: "/demo merge these  files", state: "pending" } });

      // The receipt lookup comes before any other check: with the skill gone, the retry still gets its 202.
      await rm(join(dirs.workspace, ".agents", "skills", "demo"), { recursive: true });
      const reloaded = await call(daemon, "POST", `/sessions/${other}/reload`);
      expect(reloaded.body.removed).toEqual(["demo"]);
      expect(await post(body, other)).toMatchObject({ status: 202, body: admitted.body });
      expect((await post({ ...body, operationId: newOperationId() }, other)).body).toMatchObject({ code: "command_not_found" });
      await writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", "Merge the inputs.");

      // A built-in runs at once; its turn records the result.
      const reloadOp = newOperationId();
      expect((await post({ operationId: reloadOp, type: "command", command: "/reload", arguments: "session" }, other)).status).toBe(202);
      const reloadTurn = (await call(daemon, "GET", `/operations/${reloadOp}`)).body;
      expect(reloadTurn).toMatchObject({ delivery: "committed", turn: { state: "committed", visibleText: "/reload session" } });
      expect(JSON.parse(reloadTurn.turn.outcome.reply)).toMatchObject({ added: ["demo"] });
      await waitFor(() => stream.events.some((e) => e.type === "transcript" && (e.turn as { state: string }).state === "committed"), "the committed transcript row");
      const badTarget = newOperationId();
      await post({ operationId: badTarget, type: "command", command: "/reload", arguments: "kernel" }, other);
      expect((await call(daemon, "GET", `/operations/${badTarget}`)).body).toMatchObject({ delivery: "cancelled", turn: { state: "cancelled" } });
    } finally {
      await stream.close();
      await call(daemon, "DELETE", `/sessions/${other}`);
    }
  });
});
