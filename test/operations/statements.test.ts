/**
 * What a turn change costs in SQL, counted on a real database file with better-sqlite3's
 * `verbose` hook: the store returns the turn it wrote, so nobody has to read it back.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isAppError } from "../../src/errors/index.js";
import type { AdmitResult } from "../../src/operations/index.js";
import { message, storeFixture } from "./support/fixtures.js";

const fixture = storeFixture();
afterEach(() => fixture.close());

function turnIdOf(result: AdmitResult): string {
  if (!result.ok) throw new Error(`refused: ${result.code}: ${result.detail}`);
  return result.receipt.turnId;
}

/** A store whose statements are recorded, and the id of one admitted message's turn. */
function tracedTurn(): { store: ReturnType<typeof fixture.open>["store"]; turnId: string; statements: string[] } {
  const statements: string[] = [];
  const { store } = fixture.open(undefined, (sql) => statements.push(sql));
  const turnId = turnIdOf(store.admit("s1", message("hello")));
  statements.length = 0;
  return { store, turnId, statements };
}

describe("O-1 O-3 a turn's change is one statement that returns the turn", () => {
  it("markRunning and complete each run one UPDATE … RETURNING and read nothing back; what they return is what is stored", () => {
    const { store, turnId, statements } = tracedTurn();
    const running = store.markRunning(turnId);
    expect(statements).toEqual([expect.stringMatching(/^UPDATE turns SET .* RETURNING /)]);
    expect(running).toMatchObject({ turnId, state: "running" });
    statements.length = 0;
    const committed = store.complete(turnId, { state: "committed", result: "completed", reply: "done" });
    expect(statements).toEqual([expect.stringMatching(/^UPDATE turns SET .* RETURNING /)]);
    expect(committed).toMatchObject({ state: "committed", outcome: { state: "committed", result: "completed", reply: "done" } });
    expect(store.getTurn(turnId)).toEqual(committed);
  });

  it("a refused change writes nothing and reads the turn once, to say why", () => {
    const { store, turnId, statements } = tracedTurn();
    const before = store.getTurn(turnId);
    statements.length = 0;
    let refusal: unknown;
    try {
      store.complete(turnId, { state: "committed" });
    } catch (error) {
      refusal = error;
    }
    expect(isAppError(refusal, "conflict") && refusal.data).toEqual({ turnId, state: "pending" });
    expect(statements.map((sql) => sql.split(" ")[0])).toEqual(["UPDATE", "SELECT"]);
    expect(store.getTurn(turnId)).toEqual(before);
  });
});
