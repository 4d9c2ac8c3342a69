/** Another process holding albedo.db's write lock: a backup tool, an sqlite3 shell, a hostile peer. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STORAGE_BUSY_RETRY_AFTER_S } from "../../src/daemon/limits.js";
import { newOperationId, OperationsStore } from "../../src/operations/index.js";
import { BIN, call, envFor } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { daemonProcessSession } from "../support/daemonSession.js";
import { poll } from "../support/poll.js";

/** Holds BEGIN EXCLUSIVE on the database named by argv[1] until a line arrives on stdin; says "held" and "released". */
const HOLDER = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
print("released", flush=True)
`;
/** /health requests sent one after another while a refused write keeps trying. */
const HEALTH_READS = 5;
/** How long a refused `albedo serve` may take to exit. */
const REFUSAL_TIMEOUT_MS = 30_000;

const fixture = daemonProcessSession();
const perTest = daemonFixture();
const holders: ChildProcess[] = [];

afterEach(async () => {
  for (const holder of holders.splice(0)) {
    if (holder.exitCode !== null || holder.signalCode !== null) continue;
    const gone = new Promise((resolve) => holder.once("exit", resolve));
    holder.kill("SIGKILL");
    await gone;
  }
});

/** A python3 process holding the write lock on `file`, once it says so; `release()` lets go and waits for its exit. */
async function holdLock(file: string): Promise<{ release(): Promise<void> }> {
  const holder = spawn("python3", ["-c", HOLDER, file], { stdio: ["pipe", "pipe", "inherit"] });
  holders.push(holder);
  let out = "";
  holder.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise((resolve) => holder.once("exit", resolve));
  await poll(() => {
    if (holder.exitCode !== null) throw new Error(`the lock holder exited: ${out}`);
    return out.includes("held");
  }, { what: "the holder to take the lock" });
  return {
    release: async () => {
      holder.stdin!.end("go\n");
      await exited;
      expect(out).toContain("released");
    },
  };
}

const message = (operationId: string) => ({ operation_id: operationId, type: "message", text: "hello" });

describe("B D-1 O-1 another process holding albedo.db's write lock does not stall the daemon", () => {
  it("reads and /health answer while a write still tries; the write is 503 storage_busy with Retry-After; after the lock goes it is admitted and nothing is lost", { timeout: 120_000 }, async () => {
    const { daemon, dirs, sessionId } = fixture;
    const events = `/sessions/${sessionId}/events`;
    const before = newOperationId();
    expect((await call(daemon, "POST", events, message(before))).status).toBe(202);
    // No model is configured: the turn fails at once, so no turn of the worker's is in flight when the lock is taken.
    await poll(async () => (await call(daemon, "GET", `/operations/${before}`)).body.delivery === "committed", { what: "the first turn to end" });
    const lock = await holdLock(join(dirs.state, "albedo.db"));

    const refused = newOperationId();
    let written = false;
    const write = call(daemon, "POST", events, message(refused)).finally(() => (written = true));
    // One after another: whichever came in before the write, the later ones come in while it waits.
    for (let read = 0; read < HEALTH_READS; read += 1) expect((await call(daemon, "GET", "/health")).status).toBe(200);
    expect((await call(daemon, "GET", "/sessions")).body.sessions.map((s: { id: string }) => s.id)).toEqual([sessionId]);
    expect((await call(daemon, "GET", `/operations/${before}`)).body).toMatchObject({ delivery: "committed" });
    expect(written).toBe(false);

    const answer = await write;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe(String(STORAGE_BUSY_RETRY_AFTER_S));
    expect(answer.body).toMatchObject({ code: "storage_busy", cause: "SQLITE_BUSY", detail: expect.stringContaining("nothing was changed") });
    expect((await call(daemon, "GET", `/operations/${refused}`)).status).toBe(404);

    await lock.release();
    const admitted = await call(daemon, "POST", events, message(refused));
    expect(admitted.status).toBe(202);
    expect((await call(daemon, "GET", `/operations/${refused}`)).body).toMatchObject({ receipt: admitted.body });
    expect((await call(daemon, "GET", `/operations/${before}`)).body).toMatchObject({ delivery: "committed" });
  });

  it("albedo serve started while the lock is held waits for it a while, then exits 1 naming albedo.db and what to do", { timeout: 120_000 }, async () => {
    const { dirs } = perTest;
    const file = join(dirs.state, "albedo.db");
    OperationsStore.open(file).close();
    const lock = await holdLock(file);
    const run = spawnSync(process.execPath, [BIN, "serve", "--listen", "127.0.0.1:0", "--pool", "0"], { env: envFor(dirs), encoding: "utf8", timeout: REFUSAL_TIMEOUT_MS, killSignal: "SIGKILL" });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${file} is locked by another process (SQLITE_BUSY) — stop what holds it (an sqlite3 shell, a backup tool), then start again`);
    await lock.release();
  });
});
