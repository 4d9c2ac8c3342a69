import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { call, killDaemon, startDaemon, type DaemonProcess } from "../daemon/support/daemon.js";
import { HAVE_JUPYTER_SERVER, startJupyterServer, type JupyterServer } from "./jupyterServer.js";
import { runAlbedo, type CliRun } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { roots, writeSkill } from "../support/skills.js";

/** Liveness bound for one CLI process in this file. */
const PROCESS_TIMEOUT_MS = 90_000;

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 --remote for exec, doctor and the daemon's POST /sessions (real Jupyter Server)", () => {
  let server: JupyterServer;
  let dirs: SessionDirs;
  const kernels = async () => (await server.get("api/kernels")) as { id: string }[];

  /** What the console runs: a cell whose output says which channel carries its calls (CommChannel on a remote kernel). */
  const CONSOLE_SCRIPT = "import albedo\nprint(type(albedo._session.channel).__name__, 6 * 7)\n";

  function albedo(args: string[], token = server.token, input = ""): Promise<CliRun> {
    const env = { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, JUPYTER_TOKEN: token };
    return runAlbedo(args, { cwd: dirs.workspace, env, stdin: input, timeoutMs: PROCESS_TIMEOUT_MS });
  }

  beforeAll(async () => {
    server = await startJupyterServer();
    dirs = await sessionDirs();
    writeSkill(roots.wsAgents(dirs.workspace), "demo");
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await dirs?.cleanup();
  });

  it("albedo exec --remote runs the program on the server with skills in scope, prints only its output, and leaves no kernel", async () => {
    const ran = await albedo(["exec", "--remote", server.url, "-c", "import os\nprint((await skills.read('demo'))['content'].splitlines()[1])"]);
    expect(ran.stderr).not.toContain(server.token);
    expect(ran).toMatchObject({ code: 0, stdout: "name: demo\n" });
    expect(await kernels()).toEqual([]);
  });

  it("albedo exec --remote with a wrong token exits 1 with a clear message", async () => {
    const ran = await albedo(["exec", "--remote", server.url, "-c", "print(1)"], "wrong");
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/refused the token \(HTTP 403\); set JUPYTER_TOKEN/);
  });

  it("albedo doctor --remote checks reachability, auth, the kernelspec and the kernel's ipykernel", async () => {
    const ran = await albedo(["doctor", "--remote", server.url]);
    expect(ran.code).toBe(0);
    for (const name of ["remote server", "remote auth", "remote kernelspec", "remote ipykernel"]) expect(ran.stdout).toMatch(new RegExp(`^ok +${name} `, "m"));
    expect(ran.stdout).toMatch(/ipykernel 7\.\d+/);
    const refused = await albedo(["doctor", "--remote", server.url], "wrong");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^fail +remote auth /m);
    expect(await kernels()).toEqual([]);
  });

  it("albedo console --remote runs its cells on the server (embedded)", async () => {
    const ran = await albedo(["console", "--remote", server.url], server.token, CONSOLE_SCRIPT);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("(embedded)");
    expect(ran.stdout).toContain("CommChannel 42\n");
    expect(await kernels()).toEqual([]);
  });

  it("albedo exec --remote refuses a URL carrying a token", async () => {
    const ran = await albedo(["exec", "--remote", `${server.url}?token=abc`, "-c", "print(1)"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("--remote must not have a query");
  });

  describe("the daemon", () => {
    let daemon: DaemonProcess;

    beforeAll(async () => {
      daemon = await startDaemon({ root: dirs.root, workspace: dirs.workspace, home: dirs.home, state: dirs.stateDir, cleanup: dirs.cleanup }, ["--listen", "127.0.0.1:0", "--pool", "0"], { JUPYTER_TOKEN: server.token });
    });

    afterAll(async () => {
      if (daemon) {
        daemon.process.kill("SIGTERM");
        await Promise.race([daemon.exited, new Promise((wait) => setTimeout(wait, 20_000))]);
        await killDaemon(daemon);
      }
    });

    it("POST /sessions {remote} opens a session whose kernel runs on the server; DELETE shuts it down there", async () => {
      const bad = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, remote: { url: server.url, env: { PATH: "/x" } } });
      expect(bad.status).toBe(400);
      const unreachable = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, remote: { url: "http://127.0.0.1:9/" } });
      expect(unreachable).toMatchObject({ status: 503, body: { code: "kernel_unavailable" } });
      const opened = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, remote: { url: server.url } });
      expect(opened.status).toBe(201);
      const id = (opened.body as { id: string }).id;
      expect(await kernels()).toHaveLength(1);
      const ran = await call(daemon, "POST", `/sessions/${id}/execute`, { code: "print(any(s['name'] == 'demo' for s in (await skills.list())['skills']))" });
      expect(ran.body).toMatchObject({ status: "ok", outputs: [{ msg_type: "stream", content: { text: "True\n" } }] });
      expect((await call(daemon, "DELETE", `/sessions/${id}`)).status).toBeLessThan(300);
      await poll(async () => (await kernels()).length === 0, { what: "the remote kernel to be shut down" });
    });

    it("albedo console --remote attached to the daemon asks it for a session whose kernel runs on the server", async () => {
      const ran = await albedo(["console", "--remote", server.url], server.token, CONSOLE_SCRIPT);
      expect(ran.code).toBe(0);
      expect(ran.stdout).toContain(`(daemon ${daemon.url})`);
      expect(ran.stdout).toContain("CommChannel 42\n");
      await poll(async () => (await kernels()).length === 0, { what: "the remote kernel to be shut down" });
    });
  });
});
