import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { OperationsStore, retryWhileBusy, STORE_BUSY_WAIT_MS, newOperationId } from "../../src/operations/index.js";
import { isSqliteBusy } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-operations-busy-");
const opened: { close(): void }[] = [];

afterEach(() => {
  for (const db of opened.splice(0).reverse()) db.close();
  temps.cleanup();
});

/** A store and, on the same file, a second connection holding its write lock as another process would. */
function storeWithHolder(): { store: OperationsStore; holder: Database.Database } {
  const file = join(temps.make(), "albedo.db");
  const store = OperationsStore.open(file);
  const holder = new Database(file);
  opened.push(store, holder);
  holder.exec("BEGIN EXCLUSIVE");
  return { store, holder };
}

const admit = (store: OperationsStore, operationId: string) => store.admit("s1", { operationId, type: "message", text: "hi" });

describe("B O-1 a store write meets another connection's lock: it fails at once and is tried again without blocking", () => {
  it("keeps trying while the lock is held and succeeds, once, when it goes", async () => {
    const { store, holder } = storeWithHolder();
    const id = newOperationId();
    let attempts = 0;
    const admitted = retryWhileBusy(() => ((attempts += 1), admit(store, id)));
    await poll(() => attempts >= 3, { what: "three attempts at the held lock" });
    holder.exec("ROLLBACK");
    expect(await admitted).toMatchObject({ ok: true, replayed: false });
    expect(store.listTurns("s1")).toHaveLength(1);
  });

  it(`gives up after STORE_BUSY_WAIT_MS (${STORE_BUSY_WAIT_MS} ms) with SQLite's busy error, having stored nothing`, async () => {
    const { store, holder } = storeWithHolder();
    let attempts = 0;
    const started = Date.now();
    const error = await retryWhileBusy(() => ((attempts += 1), admit(store, newOperationId()))).catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeGreaterThanOrEqual(STORE_BUSY_WAIT_MS);
    expect(attempts).toBeGreaterThan(1);
    expect(isSqliteBusy(error)).toBe(true);
    expect((error as { code?: string }).code).toBe("SQLITE_BUSY");
    holder.exec("ROLLBACK");
    expect(store.listTurns("s1")).toEqual([]);
  });

  it("throws any other error at the first attempt", async () => {
    let attempts = 0;
    const error = await retryWhileBusy(() => {
      attempts += 1;
      throw new Error("not a lock");
    }).catch((caught: unknown) => caught);
    expect([attempts, isSqliteBusy(error), (error as Error).message]).toEqual([1, false, "not a lock"]);
  });
});
