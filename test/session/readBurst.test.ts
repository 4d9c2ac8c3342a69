import { describe, expect, it } from "vitest";
import { RPC_MAX_PENDING_CALLS } from "../../src/rpc/index.js";
import { run, sessionsPerTest, writeSkill } from "./fixtures.js";

const sessions = sessionsPerTest();

/** More awaited reads at once than the runtime lets be in flight. */
const BURST = 2 * RPC_MAX_PENDING_CALLS;

describe("K-4 a burst of awaited reads in a cell", () => {
  it("answers every read: the kernel holds back what the runtime would refuse", async () => {
    const { session } = await sessions.open((dirs) => writeSkill(dirs.workspace, "demo"));
    const out = await run(session, [
      "import asyncio, collections",
      `_pages = await asyncio.gather(*[skills.read('demo', limit=64) for _ in range(${BURST})], return_exceptions=True)`,
      "print(sorted(collections.Counter(type(p).__name__ for p in _pages).items()))",
    ].join("\n"));
    expect(out.trim()).toBe(`[('dict', ${BURST})]`);
  });
});
