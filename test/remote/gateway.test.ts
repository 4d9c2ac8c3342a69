import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/index.js";
import { openSession, run, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { HAVE_ENTERPRISE_GATEWAY, startJupyterServer, type JupyterServer } from "./jupyterServer.js";
import { roots, writeSkill } from "../support/skills.js";

/** Enterprise Gateway refuses kernel starts without KERNEL_USERNAME when it runs as root. */
const USERNAME = "albedo-test";

// Enterprise Gateway is not on the package index here: these run where it is installed in the test venv.
describe.skipIf(!HAVE_ENTERPRISE_GATEWAY)("K-12 remote kernels on Jupyter Enterprise Gateway", () => {
  let gateway: JupyterServer;
  let dirs: SessionDirs;
  let session: Session;

  beforeAll(async () => {
    gateway = await startJupyterServer({ kind: "gateway", logLevel: "DEBUG" });
    dirs = await sessionDirs();
    writeSkill(roots.wsAgents(dirs.workspace), "demo");
    session = await openSession(dirs, {
      env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, JUPYTER_TOKEN: gateway.token },
      remote: { url: gateway.url, username: USERNAME },
    });
  }, 120_000);

  afterAll(async () => {
    await session?.close();
    await gateway?.stop();
    await dirs?.cleanup();
  });

  it("starts without listing kernels (the gateway may answer 403 there), runs code with skills, and sends KERNEL_USERNAME", async () => {
    const out = await run(session, "import os\nprint(os.environ.get('KERNEL_USERNAME'), (await skills.read('demo'))['content'].splitlines()[1])");
    expect(out.trim()).toBe(`${USERNAME} name: demo`);
  });

  it("keeps the token out of the gateway's log, which records URLs at INFO", async () => {
    await session.close();
    expect(await gateway.log()).not.toContain(gateway.token);
  });
});
