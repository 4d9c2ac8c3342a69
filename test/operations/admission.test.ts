import { afterEach, describe, expect, it } from "vitest";
import {
  ADMISSION_ERRORS,
  MAX_QUEUED_INPUTS,
  newOperationId,
  OPERATION_FUTURE_SKEW_MS,
  RECEIPT_TTL_MS,
  type AdmitInput,
  type AdmitResult,
} from "../../src/operations/index.js";
import { demoCommand, message, storeFixture, T0 } from "./support/fixtures.js";

const fixture = storeFixture();
afterEach(() => fixture.close());

function expectAdmitted(result: AdmitResult): Extract<AdmitResult, { ok: true }> {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.body)}`);
  return result;
}

describe("O-1 admission and replay", () => {
  it("admits a message with 202 and a receipt naming its turn", () => {
    const { store } = fixture.open();
    const input = message("hello");
    const result = expectAdmitted(store.admit("s1", input));
    expect(result.status).toBe(202);
    expect(result.replayed).toBe(false);
    expect(result.body).toEqual({ operationId: input.operationId, sessionId: "s1", turnId: expect.any(String), type: "message", admittedAt: new Date(T0).toISOString() });
    expect(store.listTurns("s1")).toHaveLength(1);
  });

  it("answers an identical replay with the original status and body, even after time passes", () => {
    const { store } = fixture.open();
    const id = newOperationId(T0);
    const first = expectAdmitted(store.admit("s1", { operationId: id, type: "message", text: "hello" }));
    fixture.clock.now += 60_000;
    // Same normalised body: other key order, outer whitespace, upper-case id.
    const again = store.admit("s1", { text: "  hello\n", type: "message", operationId: id.toUpperCase() } as AdmitInput);
    expect(again).toEqual({ ...first, replayed: true });
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    expect(store.listTurns("s1")).toHaveLength(1);
    expect(store.replay("s1", { operationId: id, type: "message", text: "hello" })).toEqual(again);
  });

  it("refuses a changed body with 409 operation_conflict, and the first decision stands", () => {
    const { store } = fixture.open();
    const input = message("first");
    const first = expectAdmitted(store.admit("s1", input));
    const changed = store.admit("s1", { ...input, text: "second" });
    expect(changed.ok).toBe(false);
    expect(changed.status).toBe(409);
    expect(changed.body).toMatchObject({ code: "operation_conflict", operationId: input.operationId });
    const otherSession = store.admit("s2", input);
    expect(otherSession.body).toMatchObject({ code: "operation_conflict" });
    const lookup = store.getOperation(input.operationId);
    expect(lookup.found && lookup.receipt.body).toEqual(first.body);
    expect(lookup.found && lookup.turn.visibleText).toBe("first");
    expect(store.listTurns("s2")).toEqual([]);
  });

  it("looks the receipt up before validating: a replay into a now-full queue still gets its original 202", () => {
    const { store } = fixture.open();
    const inputs = Array.from({ length: MAX_QUEUED_INPUTS }, (_, index) => message(`m${index}`));
    const first = expectAdmitted(store.admit("s1", inputs[0]!));
    for (const input of inputs.slice(1)) expectAdmitted(store.admit("s1", input));
    expect(store.admit("s1", message("one too many")).body).toMatchObject({ code: "queue_full" });
    expect(store.admit("s1", inputs[0]!)).toEqual({ ...first, replayed: true });
  });

  it("looks the receipt up before validating: a replay with a bad shape is a conflict, not invalid_input", () => {
    const { store } = fixture.open();
    const input = message("hello");
    expectAdmitted(store.admit("s1", input));
    const bad = store.admit("s1", { ...input, extra: 1 } as unknown as AdmitInput);
    expect(bad.body).toMatchObject({ code: "operation_conflict" });
  });
});

describe("O-1 operation id checks", () => {
  it("refuses ids that are not UUIDv7, or missing, with 400 invalid_operation_id", () => {
    const { store } = fixture.open();
    for (const operationId of ["3b241101-e2bb-4255-8caf-4136c566a962", "not-a-uuid", "", undefined, 42]) {
      const result = store.admit("s1", { operationId, type: "message", text: "x" } as unknown as AdmitInput);
      expect(result).toMatchObject({ ok: false, status: 400, body: { code: "invalid_operation_id" } });
    }
    expect(store.listTurns("s1")).toEqual([]);
  });

  it("refuses ids older than RECEIPT_TTL_MS with 410 operation_expired; exactly at the edge is admitted", () => {
    const { store } = fixture.open();
    fixture.clock.now = T0 + RECEIPT_TTL_MS;
    expect(store.admit("s1", message("old", newOperationId(T0 - 1)))).toMatchObject({ status: 410, body: { code: "operation_expired" } });
    expectAdmitted(store.admit("s1", message("edge", newOperationId(T0))));
  });

  it("refuses ids more than OPERATION_FUTURE_SKEW_MS ahead with 400 operation_future; exactly at the edge is admitted", () => {
    const { store } = fixture.open();
    expect(store.admit("s1", message("late", newOperationId(T0 + OPERATION_FUTURE_SKEW_MS + 1)))).toMatchObject({
      status: 400,
      body: { code: "operation_future" },
    });
    expectAdmitted(store.admit("s1", message("edge", newOperationId(T0 + OPERATION_FUTURE_SKEW_MS))));
  });

  it("names the HTTP status of every refusal in one table", () => {
    expect(Object.fromEntries(Object.entries(ADMISSION_ERRORS).map(([code, entry]) => [code, entry.status]))).toEqual({
      operation_conflict: 409,
      invalid_operation_id: 400,
      operation_expired: 410,
      operation_future: 400,
      queue_full: 429,
      invalid_input: 400,
    });
  });

  it("refuses malformed inputs with 400 invalid_input and stores nothing", () => {
    const { store } = fixture.open();
    const bad: unknown[] = [
      { operationId: newOperationId(T0), type: "message", text: "   " },
      { operationId: newOperationId(T0), type: "message", text: "x", extra: true },
      { operationId: newOperationId(T0), type: "shout", text: "x" },
      { operationId: newOperationId(T0), type: "command", command: "demo", arguments: "" },
      { operationId: newOperationId(T0), type: "command", command: "/demo", arguments: 3 },
      { operationId: newOperationId(T0), type: "command", command: "/demo", arguments: "", activation: { name: "demo" } },
    ];
    for (const input of bad) expect(store.admit("s1", input as AdmitInput).body).toMatchObject({ code: "invalid_input" });
    expect(store.listTurns("s1")).toEqual([]);
  });
});

describe("O-1 queue bound", () => {
  it(`holds at most ${MAX_QUEUED_INPUTS} waiting inputs per session; a started turn frees a place`, () => {
    const { store } = fixture.open();
    for (let index = 0; index < MAX_QUEUED_INPUTS; index += 1) expectAdmitted(store.admit("s1", message(`m${index}`)));
    const full = store.admit("s1", message("over"));
    expect(full).toMatchObject({ ok: false, status: 429, body: { code: "queue_full" } });
    expectAdmitted(store.admit("s2", message("another session")));
    store.markRunning(store.nextPendingTurn("s1")!.turnId);
    expectAdmitted(store.admit("s1", message("fits now")));
    expect(store.admit("s1", message("over again")).body).toMatchObject({ code: "queue_full" });
  });

  it("lets a built-in command (no activation) through a full queue: it runs at once and never waits", () => {
    const { store } = fixture.open();
    for (let index = 0; index < MAX_QUEUED_INPUTS; index += 1) expectAdmitted(store.admit("s1", message(`m${index}`)));
    expect(store.admit("s1", demoCommand("more")).body).toMatchObject({ code: "queue_full" });
    expectAdmitted(store.admit("s1", { operationId: newOperationId(T0), type: "command", command: "/reload", arguments: "session" }));
  });
});
