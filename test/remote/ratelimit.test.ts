import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteTable } from "../../src/rpc/index.js";
import { remoteHarness, type RemoteHarness } from "./harness.js";
import { HAVE_JUPYTER_SERVER, startJupyterServer, type JupyterServer } from "./jupyterServer.js";

/** Comm messages sent past the pacer in one go: more than the server forwards in its 3 s window. */
const FLOOD = 9_000;
const BURST = 5_000;
const EXCEEDED = "IOPub message rate exceeded";

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 the server's iopub rate limit is real, and paced calls stay under it", () => {
  let server: JupyterServer;
  let remote: RemoteHarness;
  let answered = 0;

  beforeAll(async () => {
    server = await startJupyterServer();
    const routes = RouteTable.of({
      "commands.catalog": async () => ({ commands: [] }),
      "skills.list": async () => {
        answered += 1;
        return { skills: [] };
      },
    });
    remote = await remoteHarness(server, routes);
  }, 120_000);

  afterAll(async () => {
    await remote?.close();
    await server?.stop();
  });

  it(`${FLOOD} comm messages sent past the pacer trip the server's limit (the control)`, async () => {
    const cell = await remote.run(`import albedo\nfor i in range(${FLOOD}):\n    albedo._session[0]._comm.send({'jsonrpc': '2.0', 'method': 'albedo/flood'})`);
    expect(cell.status).toBe("ok");
    expect(cell.stderr + (await server.log())).toContain(EXCEEDED);
  });

  it(`then a paced burst of ${BURST} calls in a new cell loses none`, async () => {
    const logBefore = (await server.log()).split(EXCEEDED).length;
    const cell = await remote.run(`import asyncio\nrs = await asyncio.gather(*[skills.list() for _ in range(${BURST})])\nprint(len(rs))`);
    expect(cell).toMatchObject({ status: "ok", stdout: `${BURST}\n` });
    expect(answered).toBe(BURST);
    expect((await server.log()).split(EXCEEDED).length).toBe(logBefore);
  }, 120_000);
});
