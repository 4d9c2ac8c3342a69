import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_REMOTE_FRAME_BYTES } from "../../src/kernel/remote/limits.js";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { poll } from "../support/poll.js";
import { hostileServer, type HostileServer } from "./hostileServer.js";
import { HAVE_JUPYTER_SERVER, startJupyterServer, type JupyterServer } from "./jupyterServer.js";

/** What the attacked cell prints once it runs; its code spells it in two halves, so only its output carries it whole. */
const MARKER = "CELL-IS-RUNNING";
/** A cell that runs until its kernel is shut down: the attack lands while it runs. */
const CELL = `import time\nprint("CELL-IS-" + "RUNNING", flush=True)\nwhile True:\n    time.sleep(0.05)\n`;
/** From SIGTERM to the daemon gone. */
const DAEMON_EXIT_MS = 20_000;

/** A binary frame whose v1 offset table has the right count but points past the frame. */
function offsetsPastTheFrame(): Buffer {
  const frame = Buffer.alloc(64, 0x7b);
  frame.writeBigUInt64LE(6n, 0);
  [56n, 57n, 9_999n, 9_999n, 9_999n, 9_999n].forEach((offset, i) => frame.writeBigUInt64LE(offset, 8 * (i + 1)));
  return frame;
}

interface Attack {
  readonly name: string;
  readonly framing: "v1" | "legacy";
  readonly frame: () => string | Buffer;
  readonly binary: boolean;
  readonly reason: RegExp;
}

const ATTACKS: readonly Attack[] = [
  { name: "garbage text", framing: "legacy", frame: () => "\u0000{{ not json at all", binary: false, reason: /the server sent a text frame that is not JSON; albedo closed the connection/ },
  { name: "valid JSON that is not a Jupyter message", framing: "legacy", frame: () => JSON.stringify({ hello: "world" }), binary: false, reason: /the server sent JSON that is not a Jupyter kernel message/ },
  { name: "a frame over MAX_REMOTE_FRAME_BYTES", framing: "v1", frame: () => Buffer.alloc(MAX_REMOTE_FRAME_BYTES + 1), binary: true, reason: /the server sent a WebSocket message larger than MAX_REMOTE_FRAME_BYTES \(64\.0 MB\)/ },
  { name: "a binary frame not in the v1 kernel protocol's layout", framing: "v1", frame: offsetsPastTheFrame, binary: true, reason: /the server sent a binary frame that is not in the v1\.kernel\.websocket\.jupyter\.org layout/ },
];

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 B D-1 a hostile server's WebSocket frame ends that session's kernel connection, never the daemon (real daemon, real Jupyter Server behind a hostile relay)", () => {
  let server: JupyterServer;
  const relays: Partial<Record<Attack["framing"], HostileServer>> = {};
  let dirs: Dirs;
  let daemon: DaemonProcess;
  let bystander: string;

  const kernels = async () => (await server.get("api/kernels")) as { id: string }[];
  const open = async (url: string): Promise<string> => {
    const opened = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, remote: { url } });
    expect(opened.status).toBe(201);
    return (opened.body as { id: string }).id;
  };
  const execute = (id: string, code: string) => call(daemon, "POST", `/sessions/${id}/execute`, { code });

  beforeAll(async () => {
    server = await startJupyterServer();
    relays.v1 = await hostileServer(new URL(server.url), "v1");
    relays.legacy = await hostileServer(new URL(server.url), "legacy");
    dirs = await makeDirs();
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"], { JUPYTER_TOKEN: server.token });
    bystander = await open(server.url);
  }, 120_000);

  afterAll(async () => {
    if (daemon) {
      if (bystander) await call(daemon, "DELETE", `/sessions/${bystander}`).catch(() => undefined);
      daemon.process.kill("SIGTERM");
      await Promise.race([daemon.exited, new Promise((wait) => setTimeout(wait, DAEMON_EXIT_MS))]);
      await killDaemon(daemon);
    }
    await relays.v1?.close();
    await relays.legacy?.close();
    await server?.stop();
    await dirs?.cleanup();
  });

  it.each(ATTACKS)("$name: the running cell and every later one fail with the reason, the daemon and another session carry on, nothing is left running", async (attack) => {
    const relay = relays[attack.framing]!;
    const id = await open(relay.url);
    const kernel = relay.kernels.at(-1)!;
    const running = execute(id, CELL);
    await poll(() => relay.relayed(MARKER), { what: "the attacked cell to run on its kernel" });
    relay.attack(attack.frame(), attack.binary);

    const answer = await running;
    expect(answer).toMatchObject({ status: 503, body: { code: "kernel_died" } });
    expect(answer.body.detail).toMatch(attack.reason);
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
    const other = await execute(bystander, "print(6 * 7)");
    expect(other.body).toMatchObject({ status: "ok", outputs: [{ msg_type: "stream", content: { text: "42\n" } }] });

    expect((await call(daemon, "GET", `/sessions/${id}`)).body.kernel.status).toBe("dead");
    expect((await execute(id, "print(1)")).body.detail).toMatch(attack.reason);
    // The connection is not retried, and the kernel is shut down on the server.
    await poll(() => relay.openSockets() === 0, { what: "the attacked kernel's WebSocket to close" });
    await poll(async () => !(await kernels()).some((running) => running.id === kernel), { what: "the attacked kernel to be shut down on the server" });
    expect((await call(daemon, "DELETE", `/sessions/${id}`)).status).toBeLessThan(300);
    expect(daemon.process.exitCode).toBeNull();
  });

  it("a frame that cannot be read while the session starts fails POST /sessions with the reason, and no kernel is left on the server", async () => {
    const relay = relays.v1!;
    relay.attackOnOpen({ data: offsetsPastTheFrame(), binary: true });
    try {
      const refused = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, remote: { url: relay.url } });
      expect(refused).toMatchObject({ status: 503, body: { code: "kernel_unavailable" } });
      expect(refused.body.detail).toMatch(/^the server sent a binary frame that is not in the v1\.kernel\.websocket\.jupyter\.org layout/);
    } finally {
      relay.attackOnOpen(undefined);
    }
    const kernel = relay.kernels.at(-1)!;
    await poll(() => relay.openSockets() === 0, { what: "the kernel's WebSocket to close" });
    await poll(async () => !(await kernels()).some((running) => running.id === kernel), { what: "the kernel to be shut down on the server" });
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
  });
});
