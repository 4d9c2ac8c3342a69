import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import type { Duplex } from "node:stream";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newOperationId } from "../../src/operations/index.js";
import { startFakeOpenAI } from "../model/fakeOpenAI.js";
import { hostileServer } from "../remote/hostileServer.js";
import { runAlbedo } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { call, envFor, type DaemonProcess } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";

// SIGKILL after each test: on a daemon that does not exit, SIGTERM would do nothing more.
const fixture = daemonFixture({ signal: "SIGKILL" });

/** How often the trickling server sends its next byte: it never finishes, and it is never silent long enough for a deadline. */
const TRICKLE_EVERY_MS = 200;

/** `albedo daemon stop` on the fixture's state dir (it waits up to DAEMON_STOP_TIMEOUT_MS, then exits 1). */
async function stopDaemon(daemon: DaemonProcess): Promise<void> {
  const { dirs } = fixture;
  const stopped = await runAlbedo(["daemon", "stop"], { cwd: dirs.workspace, env: envFor(dirs) });
  expect(stopped.stderr).not.toContain("still runs after");
  expect(stopped.code).toBe(0);
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
  expect(existsSync(join(dirs.state, "daemon.json"))).toBe(false);
}

/** Answers a WebSocket upgrade with one byte of a handshake that never ends, every TRICKLE_EVERY_MS, until the client goes away. */
function trickle(socket: Duplex): void {
  socket.on("error", () => undefined);
  socket.write("HTTP/1.1 101 Switching Protocols\r\n");
  const timer = setInterval(() => socket.write("X"), TRICKLE_EVERY_MS);
  socket.once("close", () => clearInterval(timer));
}

describe("D-1 the daemon process exits once it closed after SIGTERM, whatever is still pending", () => {
  for (const retryAfter of ["86400", "60"]) {
    it(`while a turn's model call waits on 429 Retry-After: ${retryAfter}`, { timeout: 120_000 }, async () => {
      const { dirs } = fixture;
      const model = await startFakeOpenAI();
      try {
        for (let attempt = 0; attempt < 3; attempt += 1) model.enqueue({ kind: "status", status: 429, headers: { "retry-after": retryAfter }, body: '{"error":{"message":"rate limited"}}' });
        await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ model: { provider: "openai", base_url: model.baseUrl, name: "fake" } }), { mode: 0o600 });
        const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
        const session = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body;
        expect((await call(daemon, "POST", `/sessions/${session.id}/events`, { operation_id: newOperationId(), type: "message", text: "hello" })).status).toBe(202);
        await poll(() => model.requests.length >= 1, { what: "the turn to ask the model" });
        await stopDaemon(daemon);
        expect(alive(session.kernel.pid)).toBe(false);
      } finally {
        await model.close();
      }
    });
  }

  it("while a remote Jupyter server trickles its answer to the kernel's WebSocket", { timeout: 120_000 }, async () => {
    const server = await hostileServer(undefined);
    try {
      let asked = false;
      server.answer("POST", /^\/api\/kernels$/, (_req, res) => void res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: "k-trickle", name: "python3" })));
      server.answer("DELETE", /^\/api\/kernels\/k-trickle$/, (_req, res) => void res.writeHead(204).end());
      server.onUpgrade((_req, socket) => {
        asked = true;
        trickle(socket);
      });
      const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { JUPYTER_TOKEN: "t" });
      const opening = call(daemon, "POST", "/sessions", { workspace: fixture.dirs.workspace, remote: { url: server.url } }).catch((error: unknown) => error);
      await poll(() => asked, { what: "the daemon to open the kernel's WebSocket" });
      await stopDaemon(daemon);
      await opening;
    } finally {
      await server.close();
    }
  });
});
