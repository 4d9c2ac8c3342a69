import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteTable } from "../../src/rpc/index.js";
import { remoteHarness, type RemoteHarness } from "./harness.js";
import { HAVE_JUPYTER_SERVER, startJupyterServer, type JupyterServer } from "./jupyterServer.js";

/**
 * The control for the burst test in rpc.test.ts: the server's iopub limit really drops comm
 * messages, silently for the kernel. The server here has a low limit so that the flood trips it
 * whatever else the machine is doing (the stock 1000/s is reached only by a server fast enough).
 */
const LOW_RATE_LIMIT = 200;
const FLOOD = 3_000;
const EXCEEDED = "IOPub message rate exceeded";

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 the server's iopub rate limit drops comm messages sent past the pacer", () => {
  let server: JupyterServer;
  let remote: RemoteHarness;
  let arrived = 0;

  beforeAll(async () => {
    server = await startJupyterServer({ extraArgs: [`--ServerApp.iopub_msg_rate_limit=${LOW_RATE_LIMIT}`] });
    const routes = RouteTable.of({
      "commands.catalog": async () => ({ commands: [] }),
      "skills.list": async () => {
        arrived += 1;
        return {};
      },
    });
    remote = await remoteHarness(server, routes);
  }, 120_000);

  afterAll(async () => {
    await remote?.close();
    await server?.stop();
  });

  it(`${FLOOD} requests sent past the pacer: the server says it stopped forwarding, and many never reach the runtime`, async () => {
    const cell = await remote.run([
      "import albedo",
      `for i in range(${FLOOD}):`,
      "    albedo._session.channel._comm.send({'jsonrpc': '2.0', 'id': 10**9 + i, 'method': 'skills.list', 'params': {}})",
    ].join("\n"));
    expect(cell.status).toBe("ok");
    expect(await server.log()).toContain(EXCEEDED);
    expect(arrived).toBeGreaterThan(0);
    expect(arrived).toBeLessThan(FLOOD);
  });
});
