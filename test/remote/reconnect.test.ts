import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteTable } from "../../src/rpc/index.js";
import { remoteHarness, type RemoteHarness } from "./harness.js";
import { HAVE_JUPYTER_SERVER, startJupyterServer, type JupyterServer } from "./jupyterServer.js";
import { cuttableProxy, type CuttableProxy } from "./proxy.js";

/** How long the connection stays cut while the cell makes its call. */
const OUTAGE_MS = 1_500;

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 reconnect after a dropped WebSocket (real Jupyter Server)", () => {
  let server: JupyterServer;
  let proxy: CuttableProxy;
  let remote: RemoteHarness;
  const answered: string[] = [];

  beforeAll(async () => {
    server = await startJupyterServer();
    proxy = await cuttableProxy(new URL(server.url));
    const routes = RouteTable.of({
      "commands.catalog": async () => ({ commands: [] }),
      "skills.list": async () => {
        answered.push("skills.list");
        return { skills: ["during-outage"] };
      },
    });
    remote = await remoteHarness(server, routes, { url: proxy.url });
  }, 120_000);

  afterAll(async () => {
    await remote?.close();
    await proxy?.close();
    await server?.stop();
  });

  it("a call made while the WebSocket is down is answered once it reconnects, on the same kernel and client session", async () => {
    const { cell } = await remote.start("import asyncio\nprint('ready', flush=True)\nawait asyncio.sleep(0.5)\nr = await skills.list()\nprint(r['skills'][0])", "ready");
    const sessionId = remote.kernel.sessionId;
    proxy.outage();
    await new Promise((wait) => setTimeout(wait, OUTAGE_MS));
    expect(answered).toEqual([]);
    proxy.restore();
    const ended = await cell;
    expect(ended).toMatchObject({ status: "ok" });
    expect(ended.stdout).toContain("during-outage");
    expect(answered).toEqual(["skills.list"]);
    expect(remote.kernel.sessionId).toBe(sessionId);
    expect(((await server.get("api/kernels")) as unknown[]).length).toBe(1);
    expect(await remote.run("print((await skills.list())['skills'][0])")).toMatchObject({ status: "ok", stdout: "during-outage\n" });
  }, 60_000);
});
