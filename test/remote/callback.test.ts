import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { registerCallback } from "../../src/kernel/index.js";
import { RouteTable, type CallContext } from "../../src/rpc/index.js";
import { declaration } from "../rpc/fake-session.js";
import { remoteHarness, type RemoteHarness } from "./harness.js";
import { HAVE_JUPYTER_SERVER, startJupyterServer, type JupyterServer } from "./jupyterServer.js";
import { freePort } from "./jupyterServer.js";
import { poll } from "../support/poll.js";

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 the callback WebSocket (the optional fast path)", () => {
  let server: JupyterServer;
  let remote: RemoteHarness;
  let port: number;
  const contexts: CallContext[] = [];

  beforeAll(async () => {
    server = await startJupyterServer();
    port = await freePort();
    const routes = RouteTable.of({
      "commands.catalog": async () => ({ commands: [declaration("/hang")] }),
      "skills.list": async (_params, context) => {
        contexts.push(context);
        return { skills: [] };
      },
      "commands.invoke": (_params, context) => {
        contexts.push(context);
        return new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason)));
      },
    });
    remote = await remoteHarness(server, routes, { callback: `ws://127.0.0.1:${port}/` });
  }, 120_000);

  afterAll(async () => {
    await remote?.close();
    await server?.stop();
  });

  it("carries awaited and blocking calls once the kernel dialled it, tagged with their cell", async () => {
    await poll(async () => (await remote.run("import albedo\nprint(albedo._session.channel.transport)")).stdout === "callback\n");
    const cell = await remote.run([
      "import albedo",
      "await skills.list()",
      "albedo._session.channel.call_sync('skills.list', {})",
      "print(albedo._session.channel.transport)",
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: "callback\n" });
    // The awaited call carries its cell; call_sync is the plain-script path and is given none.
    expect(contexts.slice(-2).map((context) => context.cell)).toEqual([cell.msgId, undefined]);
  });

  it("cancels an awaiting cell over it", async () => {
    const { future, cell } = await remote.start("print('calling', flush=True)\nawait commands.invoke('/hang')", "calling");
    await poll(() => contexts.some((context) => context.cell === future.msgId));
    await remote.kernel.interrupt();
    expect((await cell).ename).toBe("KeyboardInterrupt");
  });

  it("refuses an upgrade without the session's token", async () => {
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { Authorization: `Bearer ${"0".repeat(64)}` } });
      socket.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
      socket.on("open", () => resolve(101));
      socket.on("error", () => resolve(-1));
    });
    expect(status).toBe(403);
  });

  it("frees its port once the last session using it is gone", async () => {
    const registration = await registerCallback("127.0.0.1", port, () => ({ receive: () => undefined, closed: () => undefined }));
    await registration.close();
    await remote.close();
    const reachable = await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false);
    expect(reachable).toBe(false);
  });
});
