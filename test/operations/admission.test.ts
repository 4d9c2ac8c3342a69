import { afterEach, describe, expect, it } from "vitest";
import {
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
  if (!result.ok) throw new Error(`refused: ${result.code}: ${result.detail}`);
  return result;
}

describe("O-1 admission and replay", () => {
  it("admits a message with a receipt naming its turn", () => {
    const { store } = fixture.open();
    const input = message("hello");
    const result = expectAdmitted(store.admit("s1", input));
    expect(result.replayed).toBe(false);
    expect(result.receipt).toEqual({ operationId: input.operationId, sessionId: "s1", turnId: expect.any(String), type: "message", admittedAt: new Date(T0).toISOString() });
    expect(store.listTurns("s1")).toHaveLength(1);
  });

  it("answers an identical replay with the original receipt, even after time passes", () => {
    const { store } = fixture.open();
    const id = newOperationId(T0);
    const first = expectAdmitted(store.admit("s1", { operationId: id, type: "message", text: "hello" }));
    fixture.clock.now += 60_000;
    // Same normalised body: other key order, outer whitespace, upper-case id.
    const again = store.admit("s1", { text: "  hello\n", type: "message", operationId: id.toUpperCase() } as AdmitInput);
    expect(again).toEqual({ ...first, replayed: true });
    expect(again.ok && JSON.stringify(again.receipt)).toBe(JSON.stringify(first.receipt));
    expect(store.listTurns("s1")).toHaveLength(1);
    expect(store.replay("s1", { operationId: id, type: "message", text: "hello" })).toEqual(again);
  });

  it("refuses a changed body with operation_conflict, and the first decision stands", () => {
    const { store } = fixture.open();
    const input = message("first");
    const first = expectAdmitted(store.admit("s1", input));
    const changed = store.admit("s1", { ...input, text: "second" });
    expect(changed).toMatchObject({ ok: false, code: "operation_conflict", operationId: input.operationId });
    const otherSession = store.admit("s2", input);
    expect(otherSession).toMatchObject({ code: "operation_conflict" });
    const lookup = store.getOperation(input.operationId);
    expect(lookup.found && lookup.receipt).toEqual(first.receipt);
    expect(lookup.found && lookup.turn.visibleText).toBe("first");
    expect(store.listTurns("s2")).toEqual([]);
  });

  it("looks the receipt up before validating: a replay into a now-full queue still gets its original receipt", () => {
    const { store } = fixture.open();
    const inputs = Array.from({ length: MAX_QUEUED_INPUTS }, (_, index) => message(`m${index}`));
    const first = expectAdmitted(store.admit("s1", inputs[0]!));
    for (const input of inputs.slice(1)) expectAdmitted(store.admit("s1", input));
    expect(store.admit("s1", message("one too many"))).toMatchObject({ code: "queue_full" });
    expect(store.admit("s1", inputs[0]!)).toEqual({ ...first, replayed: true });
  });

  it("looks the receipt up before validating: a retry with a bad shape is a conflict, found without writing", () => {
    const { store } = fixture.open();
    const input = message("hello");
    expectAdmitted(store.admit("s1", input));
    expect(store.replay("s1", { ...input, extra: 1 })).toMatchObject({ code: "operation_conflict" });
    expect(store.replay("s1", { operationId: newOperationId(T0), type: "message", text: "never sent" })).toBeUndefined();
  });
});

describe("O-1 operation id checks", () => {
  it("refuses ids that are not UUIDv7 with invalid_operation_id: the time window needs the id's time", () => {
    const { store } = fixture.open();
    for (const operationId of ["3b241101-e2bb-4255-8caf-4136c566a962", "not-a-uuid", ""]) {
      const result = store.admit("s1", { operationId, type: "message", text: "x" });
      expect(result).toMatchObject({ ok: false, code: "invalid_operation_id" });
    }
    expect(store.listTurns("s1")).toEqual([]);
  });

  it("refuses ids older than RECEIPT_TTL_MS with operation_expired; exactly at the edge is admitted", () => {
    const { store } = fixture.open();
    fixture.clock.now = T0 + RECEIPT_TTL_MS;
    expect(store.admit("s1", message("old", newOperationId(T0 - 1)))).toMatchObject({ code: "operation_expired" });
    expectAdmitted(store.admit("s1", message("edge", newOperationId(T0))));
  });

  it("refuses ids more than OPERATION_FUTURE_SKEW_MS ahead with operation_future; exactly at the edge is admitted", () => {
    const { store } = fixture.open();
    expect(store.admit("s1", message("late", newOperationId(T0 + OPERATION_FUTURE_SKEW_MS + 1)))).toMatchObject({ code: "operation_future" });
    expectAdmitted(store.admit("s1", message("edge", newOperationId(T0 + OPERATION_FUTURE_SKEW_MS))));
  });
});

describe("O-1 queue bound", () => {
  it(`holds at most ${MAX_QUEUED_INPUTS} waiting inputs per session; a started turn frees a place`, () => {
    const { store } = fixture.open();
    for (let index = 0; index < MAX_QUEUED_INPUTS; index += 1) expectAdmitted(store.admit("s1", message(`m${index}`)));
    const full = store.admit("s1", message("over"));
    expect(full).toMatchObject({ ok: false, code: "queue_full" });
    expectAdmitted(store.admit("s2", message("another session")));
    store.markRunning(store.nextPendingTurn("s1")!.turnId);
    expectAdmitted(store.admit("s1", message("fits now")));
    expect(store.admit("s1", message("over again"))).toMatchObject({ code: "queue_full" });
  });

  it("lets a built-in command (no activation) through a full queue: it runs at once and never waits", () => {
    const { store } = fixture.open();
    for (let index = 0; index < MAX_QUEUED_INPUTS; index += 1) expectAdmitted(store.admit("s1", message(`m${index}`)));
    expect(store.admit("s1", demoCommand("more"))).toMatchObject({ code: "queue_full" });
    expectAdmitted(store.admit("s1", { operationId: newOperationId(T0), type: "command", command: "/reload", arguments: "session" }));
  });
});
