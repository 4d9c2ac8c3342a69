import { describe, expect, it } from "vitest";
import { isProcessAlive, isSameProcessAlive, processIdentity } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { unreapedChild } from "../support/zombie.js";

describe("K-13 B a process that exited is gone, even before its parent reaps it", () => {
  it("isProcessAlive and isSameProcessAlive say a zombie is not alive", async () => {
    const child = await unreapedChild();
    try {
      const identity = processIdentity(child.pid);
      expect(isProcessAlive(child.pid)).toBe(true);
      expect(isSameProcessAlive(identity)).toBe(true);
      process.kill(child.pid, "SIGKILL");
      // Still in the process table (kill(pid, 0) succeeds) until the holder waits for it, which it never does.
      await poll(() => !isProcessAlive(child.pid), { what: "the killed child to count as gone" });
      expect(() => process.kill(child.pid, 0)).not.toThrow();
      expect(isSameProcessAlive(identity)).toBe(false);
    } finally {
      await child.close();
    }
  });
});
