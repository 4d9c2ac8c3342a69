import { describe, expect, it } from "vitest";
import { poll } from "../support/poll.js";
import { unreapedChild } from "../support/zombie.js";
import { call } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";

const fixture = daemonFixture();

/** A liveness bound, far above the daemon's once-a-second look at the process. */
const CLOSED_WITHIN_MS = 10_000;

describe("K-13 a session joined to a notebook's process closes once that process is gone", () => {
  it("after kill -9, while its parent has not reaped it (a zombie)", { timeout: 60_000 }, async () => {
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const launcher = await unreapedChild();
    try {
      const opened = await call(daemon, "POST", "/sessions", { workspace: fixture.dirs.workspace, kernel: "external", kernel_pid: launcher.pid });
      expect(opened.status).toBe(201);
      process.kill(launcher.pid, "SIGKILL");
      await poll(async () => (await call(daemon, "GET", `/sessions/${opened.body.id}`)).status === 404, { what: "the daemon to close the session", timeoutMs: CLOSED_WITHIN_MS });
    } finally {
      await launcher.close();
    }
  });
});
