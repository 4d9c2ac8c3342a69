import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RemoteKernelError } from "../../src/kernel/index.js";
import type { Session } from "../../src/session/index.js";
import { openSession, run, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { collect } from "./harness.js";
import { HAVE_JUPYTER_SERVER, JUPYTER_VENV, startJupyterServer, type JupyterServer } from "./jupyterServer.js";
import { poll } from "../support/poll.js";
import { roots, writeSkill } from "../support/skills.js";

/** The variable the global settings name for the token (not the default, to prove token_env is read). */
const TOKEN_ENV = "ALBEDO_TEST_JUPYTER_TOKEN";
/** A kernelspec whose ipykernel claims 7.3.0: the bootstrap's gate must refuse it with a clear error. */
const OLD_KERNEL = "old-ipykernel";
/** A kernelspec whose kernel_info reports no subshells, as ipykernel 6.x does: refused before the bootstrap. */
const NO_SUBSHELLS_KERNEL = "no-subshells";
/**
 * A kernelspec whose kernel, once restarted, loses the iopub status of the first two
 * kernel_info_requests of each client session: what a client sees when the server's iopub socket
 * rejoins the new kernel after it answered them (the server skips its nudge for a kernel that died busy).
 */
const LOSSY_RESTART_KERNEL = "lossy-restart";
/** The variable naming the file by which that kernel knows it is a restart. */
const RESTART_MARKER_ENV = "ALBEDO_TEST_RESTART_MARKER";
/** A boot after the server's restart must be ready well before REMOTE_READY_TIMEOUT_MS (120 s). */
const RESTART_BOOT_DEADLINE_MS = 20_000;
/** How long after the session closed an unhandled rejection of its kernel may still be reported. */
const UNHANDLED_REPORT_MS = 100;
/** A refused start must come back well before any of the remote deadlines. */
const REFUSAL_DEADLINE_MS = 30_000;

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 remote session lifecycle (real Jupyter Server)", () => {
  let server: JupyterServer;
  let dirs: SessionDirs;
  let session: Session;
  let env: NodeJS.ProcessEnv;

  const kernels = async () => (await server.get("api/kernels")) as { id: string }[];

  beforeAll(async () => {
    const python = join(JUPYTER_VENV, "bin", "python");
    const fake = "import ipykernel; ipykernel.__version__ = '7.3.0'; from ipykernel.kernelapp import launch_new_instance; launch_new_instance()";
    const six = [
      "import ipykernel.kernelbase as kb",
      "info = kb.Kernel.kernel_info",
      "kb.Kernel.kernel_info = property(lambda self: {**info.fget(self), 'supported_features': []})",
      "from ipykernel.kernelapp import launch_new_instance",
      "launch_new_instance()",
    ].join("\n");
    const lossy = [
      "import os",
      "import ipykernel.kernelbase as kb",
      `marker = os.environ["${RESTART_MARKER_ENV}"]`,
      "restarted = os.path.exists(marker)",
      "open(marker, 'a').close()",
      "lost = {}",
      "publish = kb.Kernel._publish_status",
      "def lossy(self, status, channel, parent=None):",
      "    header = (parent or self.get_parent(channel) or {}).get('header', {})",
      "    if restarted and header.get('msg_type') == 'kernel_info_request':",
      "        ids = lost.setdefault(header.get('session'), set())",
      "        if header.get('msg_id') in ids or len(ids) < 2:",
      "            ids.add(header.get('msg_id'))",
      "            return",
      "    publish(self, status, channel, parent)",
      "kb.Kernel._publish_status = lossy",
      "from ipykernel.kernelapp import launch_new_instance",
      "launch_new_instance()",
    ].join("\n");
    dirs = await sessionDirs();
    server = await startJupyterServer({
      logLevel: "DEBUG",
      kernelspecs: {
        [OLD_KERNEL]: { argv: [python, "-c", fake, "-f", "{connection_file}"], display_name: "old", language: "python" },
        [NO_SUBSHELLS_KERNEL]: { argv: [python, "-c", six, "-f", "{connection_file}"], display_name: "no subshells", language: "python" },
        [LOSSY_RESTART_KERNEL]: {
          argv: [python, "-c", lossy, "-f", "{connection_file}"], display_name: "lossy restart", language: "python",
          env: { [RESTART_MARKER_ENV]: join(dirs.stateDir, "lossy-kernel-started") },
        },
      },
    });
    writeSkill(roots.wsAgents(dirs.workspace), "demo");
    // The server comes from the global settings file, as a user would configure it.
    await writeFile(join(dirs.stateDir, "settings.json"), JSON.stringify({ kernel: { remote: { url: server.url, token_env: TOKEN_ENV } } }));
    env = { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, [TOKEN_ENV]: server.token };
    session = await openSession(dirs, { env });
  }, 120_000);

  afterAll(async () => {
    await session?.close();
    await server?.stop();
    await dirs?.cleanup();
  });

  it("starts the kernel on the server: skills, commands and typed methods exist, the bootstrap left no history", async () => {
    expect(session.kernel.kind).toBe("remote");
    expect(await kernels()).toHaveLength(1);
    const out = await run(session, [
      "from albedo import skills as s2, commands as c2",
      "import inspect",
      "print(s2 is skills, c2 is commands)",
      "ip = get_ipython()",
      "print(len(In), len(_ih), len(list(ip.history_manager.get_range(ip.history_manager.session_number))))",
      "print(inspect.signature(commands.demo))",
      "print((await skills.read('demo'))['content'].splitlines()[1])",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual(["True True", "2 2 1", "(arguments=None)", "name: demo"]);
  });

  it("the runtime reads for a remote kernel only what a sandbox would show: a link into the state dir is refused", async () => {
    const skill = writeSkill(roots.wsAgents(dirs.workspace), "linked");
    await writeFile(join(skill, "notes.txt"), "plain notes\n");
    await symlink(join(dirs.stateDir, "settings.json"), join(skill, "leak.txt"));
    await session.reload();
    const out = await run(session, [
      "import albedo",
      "print((await skills.read('linked', 'notes.txt'))['content'].strip())",
      "try:",
      "    await skills.read('linked', 'leak.txt')",
      "except albedo.Forbidden as error:",
      "    print('forbidden')",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual(["plain notes", "forbidden"]);
  });

  it("streams outputs as the cell runs", async () => {
    const future = session.kernel.execute("import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')");
    const order: string[] = [];
    future.onOutput((output) => order.push(`${(output.content as { text: string }).text.trim()}:${settled ? "after" : "before"}`));
    let settled = false;
    void future.done.then(() => (settled = true));
    await future.done;
    expect(order[0]).toBe("first:before");
  });

  it("interrupts a blocking cell", async () => {
    const future = session.kernel.execute("import time\nprint('blocking', flush=True)\ntime.sleep(100)");
    await new Promise<void>((seen) => future.onOutput(() => seen()));
    await session.kernel.interrupt();
    expect(await collect(future)).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
  });

  it("K-7 reload swaps the catalog without restarting the remote kernel", async () => {
    await run(session, "import os\nkept = 42\npid_before = os.getpid()");
    const id = (await kernels())[0]!.id;
    writeSkill(roots.wsAgents(dirs.workspace), "added-later");
    const result = await session.reload();
    expect(result.added).toContain("added-later");
    const out = await run(session, [
      "print(kept, os.getpid() == pid_before)",
      "print((await commands.invoke('/added-later', 'go'))['name'])",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual(["42 True", "added-later"]);
    expect((await kernels()).map((kernel) => kernel.id)).toEqual([id]);
  });

  it("K-9 restart boots the kernel again on the server and bootstraps it again, with nothing in the history", async () => {
    const id = (await kernels())[0]!.id;
    const statuses: string[] = [];
    const watch = session.kernel.onStatus((event) => statuses.push(event.status));
    await session.kernel.restart();
    watch.dispose();
    expect(statuses[0]).toBe("restarting");
    expect(statuses).toContain("ready");
    expect(statuses).not.toContain("dead");
    const out = await run(session, "print('kept' in dir(), len(In), len((await skills.list())['skills']) > 0)");
    expect(out.trim()).toBe("False 2 True");
    expect((await kernels()).map((kernel) => kernel.id)).toEqual([id]);
  });

  it("K-9 a kernel that dies is restarted by its server and bootstrapped again; the dying cell fails with kernel_died", async () => {
    const statuses: string[] = [];
    const watch = session.kernel.onStatus((event) => statuses.push(event.status));
    try {
      const dying = session.kernel.execute("import os\nos._exit(1)");
      await expect(dying.done).rejects.toMatchObject({ code: "kernel_died" });
      await poll(() => statuses.includes("ready"), { timeoutMs: 60_000 });
      expect(statuses.filter((status) => status !== "busy" && status !== "idle").slice(0, 3)).toEqual(["dead", "restarting", "ready"]);
      expect((await run(session, "print(len((await skills.list())['skills']) > 0)")).trim()).toBe("True");
    } finally {
      watch.dispose();
    }
  });

  it("K-9 a kernel restarted by its server whose first kernel_info answers lose their iopub status is still booted: the boot asks again", async () => {
    const lossy = await openSession(dirs, { env, remote: { url: server.url, kernel_name: LOSSY_RESTART_KERNEL } });
    try {
      const statuses: string[] = [];
      lossy.kernel.onStatus((event) => statuses.push(event.status));
      await expect(lossy.kernel.execute("import os\nos._exit(1)").done).rejects.toMatchObject({ code: "kernel_died" });
      await poll(() => statuses.includes("ready"), { what: "the boot after the server's restart", timeoutMs: RESTART_BOOT_DEADLINE_MS });
      expect(await run(lossy, "print('booted')")).toBe("booted\n");
    } finally {
      await lossy.close();
    }
  });

  it("K-9 a kernel_info services sent at a reconnect and never saw complete is cancelled at the next restart or death without an unhandled rejection", async () => {
    // services chains its connect-time kernel_info with no rejection handler; a rejection there ends a daemon.
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", record);
    const lossy = await openSession(dirs, { env, remote: { url: server.url, kernel_name: LOSSY_RESTART_KERNEL } });
    try {
      const statuses: string[] = [];
      lossy.kernel.onStatus((event) => statuses.push(event.status));
      const dieAndReboot = async (what: string) => {
        statuses.length = 0;
        await expect(lossy.kernel.execute("import os\nos._exit(1)").done).rejects.toMatchObject({ code: "kernel_died" });
        await poll(() => statuses.includes("ready"), { what, timeoutMs: RESTART_BOOT_DEADLINE_MS });
      };
      await dieAndReboot("the boot after the first death");
      // services' request from the reconnect lost its idle: the restart cancels it.
      await lossy.kernel.restart();
      // And so does the server's restart after a second death.
      await dieAndReboot("the boot after the second death");
      expect(await run(lossy, "print('booted')")).toBe("booted\n");
    } finally {
      await lossy.close();
      // An unhandled rejection is reported after the microtasks of the turn that made it.
      await new Promise((done) => setTimeout(done, UNHANDLED_REPORT_MS));
      process.off("unhandledRejection", record);
    }
    expect(unhandled.map(String)).toEqual([]);
  });

  it("a wrong token fails with a clear error naming the variable, and starts nothing", async () => {
    const before = await kernels();
    const started = Date.now();
    const failure = await openSession(dirs, { env: { ...env, [TOKEN_ENV]: "wrong" } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RemoteKernelError);
    expect(failure).toMatchObject({ code: "unauthorized" });
    expect((failure as Error).message).toContain(TOKEN_ENV);
    expect((failure as Error).message).not.toContain(server.token);
    expect(Date.now() - started).toBeLessThan(REFUSAL_DEADLINE_MS);
    expect(await kernels()).toEqual(before);
  });

  it("an ipykernel older than 7.4 gets a clear error naming the version needed, never a hang, and is shut down", async () => {
    const before = await kernels();
    const started = Date.now();
    const failure = await openSession(dirs, { env, remote: { url: server.url, kernel_name: OLD_KERNEL } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RemoteKernelError);
    expect(failure).toMatchObject({ code: "too_old" });
    expect((failure as Error).message).toMatch(/ipykernel >= 7\.4\.0.*ipykernel 7\.3\.0/);
    expect(Date.now() - started).toBeLessThan(REFUSAL_DEADLINE_MS);
    expect(await kernels()).toEqual(before);
  });

  it("a kernel without subshells (ipykernel 6.x) is refused from its kernel_info, before anything waits on a subshell", async () => {
    const before = await kernels();
    const failure = await openSession(dirs, { env, remote: { url: server.url, kernel_name: NO_SUBSHELLS_KERNEL } }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "too_old" });
    expect((failure as Error).message).toMatch(/no subshells.*ipykernel >= 7\.4\.0/);
    expect(await kernels()).toEqual(before);
  });

  it("an unreachable server fails at once with a clear error", async () => {
    const failure = await openSession(dirs, { env, remote: { url: "http://127.0.0.1:9/" } }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "unreachable" });
    expect((failure as Error).message).toContain("127.0.0.1:9");
  });

  it("closing the session shuts the kernel down on the server, and the token never reached the server's log", async () => {
    const id = (await kernels())[0]!.id;
    const secret = session.bridge().token;
    await session.close();
    expect(await kernels()).toEqual([]);
    const log = await server.log();
    // Nor did the session secret the comm's open data carries.
    expect(log).not.toContain(secret);
    // The DEBUG log names the kernel's WebSocket URL, so a token in it would show.
    expect(log).toContain(`/api/kernels/${id}/channels`);
    expect(log).not.toContain(server.token);
  });
});

describe("K-12 kernel.remote comes from the global settings only", () => {
  it("a project file's kernel.remote does not move the kernel: the session runs locally", async () => {
    const dirs = await sessionDirs();
    try {
      await mkdir(join(dirs.workspace, ".albedo"), { recursive: true });
      await writeFile(join(dirs.workspace, ".albedo", "settings.json"), JSON.stringify({ kernel: { remote: { url: "http://127.0.0.1:9/" } } }));
      const local = await openSession(dirs);
      try {
        expect(local.kernel.kind).toBe("local");
        expect(await run(local, "print(1)")).toBe("1\n");
      } finally {
        await local.close();
      }
    } finally {
      await dirs.cleanup();
    }
  });
});
