import { fileURLToPath } from "node:url";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { OperationsStore, type AdmitInput, type Receipt } from "../../src/operations/index.js";
import { killChild, startChild, waitForOutput, type Child } from "../settings/support/children.js";
import { tempDirs } from "../support/tempDirs.js";

const ADMIT_CHILD = fileURLToPath(new URL("./support/admitChild.ts", import.meta.url));
const temps = tempDirs("albedo-operations-restart-");
const children: Child[] = [];
const stores: OperationsStore[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(killChild));
  for (const store of stores.splice(0)) store.close();
  temps.cleanup();
});

interface Admitted {
  readonly input: AdmitInput;
  readonly receipt: Receipt;
}

describe("O-2 restart", () => {
  it("after kill -9, every admitted input is there once, the running turn and the queued ones are abandoned with their reasons, replays answer as before", { timeout: 120_000 }, async () => {
    const file = join(temps.make(), "albedo.db");
    const count = 6;
    const child = startChild(ADMIT_CHILD, [file, "s1", String(count)]);
    children.push(child);
    await waitForOutput(child, (out) => out.includes("running "));
    await killChild(child);
    const lines = child.stdout().trim().split("\n");
    const admitted = lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Admitted);
    const runningId = lines.find((line) => line.startsWith("running "))!.slice("running ".length);
    expect(admitted).toHaveLength(count);

    const store = OperationsStore.open(file);
    stores.push(store);
    expect(store.recoverAfterRestart()).toEqual({ running: 1, queued: count - 1 });
    const turns = store.listTurns("s1");
    expect(turns.map((turn) => turn.operationId)).toEqual(admitted.map((entry) => entry.input.operationId));
    expect(turns.find((turn) => turn.turnId === runningId)).toMatchObject({ state: "abandoned", outcome: { state: "abandoned", reason: expect.stringContaining("while this turn was running") } });
    // Sessions end with their process: no one would ever run a turn still queued for one, so none is left pending forever.
    const queued = turns.filter((turn) => turn.turnId !== runningId);
    expect(queued).toHaveLength(count - 1);
    for (const turn of queued) expect(turn).toMatchObject({ state: "abandoned", outcome: { state: "abandoned", reason: expect.stringContaining("before this turn ran") } });

    for (const entry of admitted) {
      expect(store.admit("s1", entry.input)).toEqual({ ok: true, receipt: entry.receipt, replayed: true });
    }
    const abandonedOp = admitted.find((entry) => entry.receipt.turnId === runningId)!.input.operationId;
    expect(store.getOperation(abandonedOp)).toMatchObject({ found: true, delivery: "cancelled", turn: { state: "abandoned" } });
    expect(store.getTurn(admitted[1]!.receipt.turnId)?.activation?.activation.instructions).toBe("step 1");

    // A second recovery finds nothing more to do, and nothing was duplicated.
    expect(store.recoverAfterRestart()).toEqual({ running: 0, queued: 0 });
    const raw = new Database(file, { readonly: true });
    try {
      for (const table of ["receipts", "inputs", "turns"]) {
        expect((raw.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n).toBe(count);
      }
    } finally {
      raw.close();
    }
  });
});
