/**
 * Sandboxed notebook kernels (K-14): a kernel Jupyter starts from the installed "albedo"
 * kernelspec is the daemon's sandboxed kernel, reached through the launcher's relay. Real
 * notebook clients (nbclient and jupyter_client from the Jupyter test venv), a real daemon, a real
 * bubblewrap sandbox, real processes killed for real.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { KernelClient } from "../../src/kernel/index.js";
import { packageLayerDir } from "../../src/sandbox/index.js";
import { call, killDaemon, makeDirs, ROOT, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { writeSkill } from "../support/skills.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { installSpec, run, startSpecKernel } from "./support.js";

const DRIVER = join(ROOT, "test", "notebook", "jupyter_driver.py");
const PINNING = join(ROOT, "test", "notebook", "relay_pinning.py");
/** nbclient and jupyter_client come from the Jupyter test venv; without it the groups that drive a notebook are skipped (the global setup says so). */
const JUPYTER_PYTHON = TEST_VENV_PYTHON;
/** The longest a driver run may take: a notebook of a dozen cells, or the lifecycle's restarts. */
const DRIVER_TIMEOUT_MS = 150_000;
/** A test's bound: a driver run and its setting up, on a loaded machine. */
const TEST_TIMEOUT_MS = 200_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
// Registered after the hook above, so each daemon stops before the test's own cleanups run.
const fixture = daemonFixture({ signal: "SIGKILL" });

async function dirsFor(): Promise<Dirs> {
  const dirs = await makeDirs();
  cleanups.push(() => dirs.cleanup());
  return dirs;
}

/** Runs the Jupyter-side driver in `cwd`; its JSON answer. */
async function driver(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(JUPYTER_PYTHON, [DRIVER, ...args], { env, cwd, timeout: DRIVER_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Runs a notebook of `cells` with nbclient in `cwd`; what each cell showed. */
async function notebookCells(dirs: Dirs, cells: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<string[]> {
  const file = join(dirs.root, "cells.json");
  await writeFile(file, JSON.stringify(cells));
  return (await driver(["notebook", file], env, cwd)).cells as string[];
}

/** What Jupyter's environment says of the user: their home and albedo's state dir. */
const jupyterEnv = (dirs: Dirs) => ({ HOME: dirs.home, ALBEDO_HOME: dirs.state });

/** A daemon for `dirs`, the kernelspec installed, and the environment Jupyter gets. */
async function setUp(dirs: Dirs, settings?: object, daemonEnv?: NodeJS.ProcessEnv): Promise<{ daemon: DaemonProcess; env: NodeJS.ProcessEnv }> {
  if (settings !== undefined) await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
  const daemon = await fixture.start(["--pool", "0"], daemonEnv, { dirs });
  const env = { ...installSpec(dirs.root), ...jupyterEnv(dirs) };
  return { daemon, env };
}

async function sessions(daemon: DaemonProcess): Promise<Array<{ id: string; workspace: string; kernel: { status: string; pid: number | null; sandbox: string } }>> {
  return (await call(daemon, "GET", "/sessions")).body.sessions;
}

function listener(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port, connections: () => connections })));
}

describe.skipIf(!HAVE_TEST_VENV)("K-14 a notebook on the albedo kernelspec runs in the sandbox", () => {
  it("nbclient: a cell cannot read ~/.ssh, write outside its directory, reach a loopback listener or see the state dir; limits apply; skills, commands, slash lines and %albedo work", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", { body: "Demo instructions here.\n" });
    await mkdir(join(dirs.home, ".ssh"), { recursive: true });
    await writeFile(join(dirs.home, ".ssh", "id_rsa"), "PRIVATE KEY\n", { mode: 0o600 });
    const { daemon, env } = await setUp(dirs, { limits: { openFiles: 321 } });
    const loopback = await listener();
    cleanups.push(() => new Promise((resolve) => loopback.server.close(() => resolve())));
    // Outside the scratch /tmp: a host directory the sandbox shows read-only, if at all.
    const elsewhere = mkdtempSync(join("/var/tmp", "alb-outside-"));
    cleanups.push(async () => rmSync(elsewhere, { recursive: true, force: true }));
    const outside = join(elsewhere, "outside.txt");
    const attempt = (code: string) => `try:\n    ${code}\n    print('REACHED')\nexcept Exception as error:\n    print('REFUSED', type(error).__name__)`;
    const cells = [
      "import os, socket\nprint(os.getcwd())",
      attempt(`print(open(${JSON.stringify(join(dirs.home, ".ssh", "id_rsa"))}).read())`),
      attempt(`open(${JSON.stringify(outside)}, 'w').write('escaped')`),
      attempt(`socket.create_connection(('127.0.0.1', ${loopback.port}), timeout=3).close()`),
      `print(sorted(os.listdir(${JSON.stringify(dirs.state)})))`,
      "open('inside.txt', 'w').write('kept')\nprint(await skills.list())",
      "/demo go",
      "%albedo /help",
      "c = await commands.catalog()\nprint('/reload' in [x['name'] for x in c['commands']])",
      "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE))",
      "import sys\nprint(sys.prefix)",
    ];
    const shown = await notebookCells(dirs, cells, env, dirs.workspace);
    expect(shown[0]).toBe(`${dirs.workspace}\n`);
    expect(shown[1]).toMatch(/^REFUSED (FileNotFoundError|PermissionError)/);
    expect(shown[2]).toMatch(/^REFUSED (FileNotFoundError|PermissionError|OSError)/);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(shown[3]).toMatch(/^REFUSED /);
    expect(loopback.connections()).toBe(0);
    // The state dir is an empty scratch dir in the sandbox but for its run dirs: no token, no settings, no database.
    expect(shown[4]).not.toMatch(/daemon\.token|settings\.json|operations|daemon\.json/);
    expect(existsSync(join(dirs.state, "daemon.token"))).toBe(true);
    expect(shown[5]).toContain("'demo'");
    expect(existsSync(join(dirs.workspace, "inside.txt"))).toBe(true);
    expect(shown[6]).toContain("Demo instructions here.");
    expect(shown[7]).toContain("/reload");
    expect(shown[8]).toBe("True\n");
    // The limits settings apply to a notebook's kernel as to any.
    expect(shown[9]).toBe("(321, 321)\n");
    // It runs from its workspace's package layer (N-5), as a console's kernel does: `%pip install` goes there.
    expect(shown[10]).toBe(`${packageLayerDir(dirs.state, realpathSync(dirs.workspace))}\n`);
    // The notebook's session was the daemon's own sandboxed kernel; it closed when nbclient shut the kernel down.
    await poll(async () => (await sessions(daemon)).length === 0, { what: "the notebook's session to close" });
  });
});

describe.skipIf(!HAVE_TEST_VENV)("K-14 a notebook in a project's subfolder works in the project", () => {
  /** A project holding a skill and data, and its notebooks/ folder (with an empty .albedo: no marker). */
  async function project(dirs: Dirs): Promise<{ project: string; notebooks: string }> {
    const project = join(dirs.workspace, "project");
    const notebooks = join(project, "notebooks");
    writeSkill(join(project, ".agents", "skills"), "demo", { body: "Demo instructions here.\n" });
    await mkdir(join(project, "data"), { recursive: true });
    await writeFile(join(project, "data", "table.csv"), "a,b\n1,2\n");
    await mkdir(join(notebooks, ".albedo"), { recursive: true });
    return { project, notebooks };
  }

  it("nbclient: the kernel works in the notebook's folder with the project's skills, slash commands and ../data", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const { notebooks } = await project(dirs);
    const { env } = await setUp(dirs);
    const cells = [
      "import os\nprint(os.getcwd())",
      "print(open('../data/table.csv').read(), end='')",
      "print([s['name'] for s in (await skills.list())['skills'] if s['name'] == 'demo'])",
      "/demo go",
      "open('result.txt', 'w').write('kept')",
    ];
    const shown = await notebookCells(dirs, cells, env, notebooks);
    expect(shown.slice(0, 3)).toEqual([`${notebooks}\n`, "a,b\n1,2\n", "['demo']\n"]);
    expect(shown[3]).toContain("Demo instructions here.");
    expect(existsSync(join(notebooks, "result.txt"))).toBe(true);
  });

  it("the launcher's line names the project and the marker that decided it; ALBEDO_WORKSPACE pins another", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const { project: root, notebooks } = await project(dirs);
    const { daemon, env } = await setUp(dirs);
    const found = await startSpecKernel(env, notebooks, join(dirs.root, "k1"), jupyterEnv(dirs), cleanups);
    expect(await run(found.kernel, "import os\nprint(os.getcwd())")).toEqual({ status: "ok", text: `${notebooks}\n` });
    expect(found.stderr()).toMatch(new RegExp(`^albedo: kernel sandboxed \\(bubblewrap\\), session \\w+ on ${root} \\(it holds \\.agents\\)$`, "m"));
    expect((await sessions(daemon)).map((s) => s.workspace)).toEqual([root]);
    const pinned = await startSpecKernel(env, notebooks, join(dirs.root, "k2"), { ...jupyterEnv(dirs), ALBEDO_WORKSPACE: dirs.workspace }, cleanups);
    expect(await run(pinned.kernel, "import os\nprint(os.getcwd(), os.path.exists('../data/table.csv'))")).toEqual({ status: "ok", text: `${notebooks} True\n` });
    expect(pinned.stderr()).toMatch(new RegExp(`session \\w+ on ${dirs.workspace} \\(ALBEDO_WORKSPACE\\)$`, "m"));
    expect((await sessions(daemon)).map((s) => s.workspace).sort()).toEqual([dirs.workspace, root].sort());
  });
});

describe.skipIf(!HAVE_TEST_VENV)("K-14 Jupyter's lifecycle reaches the sandboxed kernel", () => {
  it("jupyter_client: interrupt by signal and by message, a forged signature dropped, restart, shutdown in order with nothing left", { timeout: TEST_TIMEOUT_MS, retry: 1 }, async () => {
    const dirs = await dirsFor();
    const { daemon, env } = await setUp(dirs);
    // Retried once: on a machine loaded by the rest of the suite one run saw the second long cell never start within a minute (its iopub messages are in the report).
    const report = await driver(["lifecycle"], env, dirs.workspace);
    expect(report.first).toEqual({ status: "ok", ename: null, text: `${dirs.workspace} True True\n` });
    expect(report.slash).toMatchObject({ status: "ok" });
    expect((report.slash as { text: string }).text).toContain("/reload");
    expect(report.interrupt_signal).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect(report.interrupt_message).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    // Forwarded untouched, the forged request reached the kernel, which dropped it: it never ran, and the kernel serves on.
    expect(report.forged_ran).toBe(false);
    expect(existsSync(join(dirs.workspace, "forged.txt"))).toBe(false);
    expect(report.after_forged).toEqual({ status: "ok", ename: null, text: "still here before restart\n" });
    // A restart is a new launcher and a new sandboxed kernel: the old namespace is gone, skills are back.
    expect(report.restarted_launcher_pid).not.toBe(report.launcher_pid);
    expect(report.after_restart).toEqual({ status: "ok", ename: null, text: "False True\n" });
    expect(report.alive_after_shutdown).toBe(false);
    for (const pid of [report.launcher_pid, report.restarted_launcher_pid] as number[]) expect(alive(pid)).toBe(false);
    await poll(async () => (await sessions(daemon)).length === 0, { what: "both sessions to close" });
  });
});

describe.skipIf(!HAVE_TEST_VENV)("K-14 Jupyter's connection file may say ipc", () => {
  it("jupyter_client with transport ipc: the launcher binds Jupyter's socket files and relays as over TCP", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const { daemon, env } = await setUp(dirs);
    const sockets = join(dirs.root, "j");
    await mkdir(sockets);
    const report = await driver(["ipc", sockets], env, dirs.workspace);
    expect(report).toEqual({ cell: { status: "ok", ename: null, text: "over ipc True\n" }, alive_after_shutdown: false });
    await poll(async () => (await sessions(daemon)).length === 0, { what: "the session to close" });
  });
});

describe("K-14 no process outlives its partner", () => {
  /** A kernel started from the kernelspec as Jupyter starts one, its session, and the kernel's pid. */
  async function started(dirs: Dirs, env: NodeJS.ProcessEnv, daemon: DaemonProcess): Promise<{ kernel: KernelClient; launcher: number; kernelPid: number; stderr: () => string }> {
    const { kernel, stderr } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), jupyterEnv(dirs), cleanups);
    expect(await run(kernel, "print(1 + 1)")).toEqual({ status: "ok", text: "2\n" });
    const [session] = await sessions(daemon);
    expect(session).toMatchObject({ workspace: dirs.workspace, kernel: { sandbox: "bwrap" } });
    return { kernel, launcher: kernel.pid!, kernelPid: session!.kernel.pid!, stderr };
  }

  it("a killed launcher takes its kernel with it", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const { daemon, env } = await setUp(dirs);
    const { launcher, kernelPid } = await started(dirs, env, daemon);
    process.kill(launcher, "SIGKILL");
    await poll(async () => (await sessions(daemon)).length === 0, { what: "the daemon to close the launcher's session" });
    await poll(() => !alive(kernelPid), { what: "the sandboxed kernel to go" });
  });

  it("a killed kernel ends its launcher, so Jupyter sees the kernel dead", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const { daemon, env } = await setUp(dirs);
    const { kernel, launcher, kernelPid, stderr } = await started(dirs, env, daemon);
    process.kill(kernelPid, "SIGKILL");
    await poll(() => !alive(launcher), { what: "the launcher to exit" });
    await poll(() => kernel.status === "dead" || kernel.status === "ready", { what: "the client to see its kernel die" });
    // Under auto the launcher says what it started, then why it ended.
    expect(stderr()).toMatch(/^albedo: kernel sandboxed \(bubblewrap\), session \w+ on /m);
    expect(stderr()).toContain("albedo: relay ended: the kernel ended");
    await poll(async () => (await sessions(daemon)).every((session) => session.kernel.pid !== kernelPid), { what: "the dead kernel's session to close" });
  });

  it("a kernel shut down as its client asks (jupyter console's exit) ends its launcher without a stray line", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const { daemon, env } = await setUp(dirs);
    const { kernel, launcher, kernelPid, stderr } = await started(dirs, env, daemon);
    await kernel.shutdown();
    await poll(() => !alive(launcher) && !alive(kernelPid), { what: "the launcher and its kernel to end" });
    expect(stderr()).toMatch(/^albedo: kernel sandboxed \(bubblewrap\), session \w+ on /m);
    expect(stderr()).not.toContain("relay ended");
  });

  it("a killed daemon takes the kernel with it, and the launcher ends", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const { daemon, env } = await setUp(dirs);
    const { launcher, kernelPid } = await started(dirs, env, daemon);
    await killDaemon(daemon, "SIGKILL");
    await poll(() => !alive(kernelPid), { what: "the kernel to die with its daemon" });
    await poll(() => !alive(launcher), { what: "the launcher to exit" });
  });
});

describe.skipIf(!HAVE_TEST_VENV)("K-14 the sandbox setting decides", () => {
  it("required without a bubblewrap: the notebook's kernel runs no code and every cell says why", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    const bin = join(dirs.root, "bin-without-bwrap");
    await mkdir(bin);
    const { daemon, env } = await setUp(dirs, { sandbox: "required" }, { PATH: bin });
    const shown = await notebookCells(dirs, ["open('ran.txt', 'w').write('ran')", "print(1)"], env, dirs.workspace);
    for (const text of shown) expect(text).toMatch(/^AlbedoKernelRefused: albedo: this kernel runs no code: the albedo daemon refused a session .*bubblewrap/);
    expect(existsSync(join(dirs.workspace, "ran.txt"))).toBe(false);
    expect(await sessions(daemon)).toEqual([]);
  });

  it("required and no daemon to be had: refused too, never an unsandboxed kernel", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ sandbox: "required" }), { mode: 0o600 });
    const nowhere = join(dirs.root, "no-install");
    await mkdir(nowhere);
    const env = { ...installSpec(dirs.root), ...jupyterEnv(dirs) };
    const { kernel, stderr } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), { ...jupyterEnv(dirs), ALBEDO_INSTALL: nowhere }, cleanups);
    const result = await run(kernel, "print('ran')");
    expect(result.status).toBe("error");
    expect(result.text).toMatch(/^AlbedoKernelRefused: albedo: this kernel runs no code: .*the sandbox setting is required/);
    expect(stderr()).toMatch(/^albedo: .*the sandbox setting is required/m);
  });

  it("off: the kernel runs unsandboxed through the relay, and the launcher says so", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = await dirsFor();
    await mkdir(join(dirs.home, ".ssh"), { recursive: true });
    await writeFile(join(dirs.home, ".ssh", "id_rsa"), "PRIVATE KEY\n", { mode: 0o600 });
    const { daemon, env } = await setUp(dirs, { sandbox: "off" });
    const { kernel, stderr } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), jupyterEnv(dirs), cleanups);
    expect(await run(kernel, `print(open(${JSON.stringify(join(dirs.home, ".ssh", "id_rsa"))}).read(), end='')`)).toEqual({ status: "ok", text: "PRIVATE KEY\n" });
    expect((await sessions(daemon))[0]).toMatchObject({ workspace: dirs.workspace, kernel: { sandbox: "none" } });
    expect(stderr()).toMatch(/^albedo: kernel NOT sandboxed /m);
  });
});

describe("K-14 the relay reaches only the kernel's own sockets", () => {
  it("a link or a file in place of a socket is refused, and a socket replaced by a link later is never followed", { timeout: TEST_TIMEOUT_MS }, async () => {
    const { stdout } = await promisify(execFile)(join(ROOT, ".venv", "bin", "python"), [PINNING], { env: { ...process.env, PYTHONPATH: join(ROOT, "kernel") }, timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ link_refused: true, file_refused: true, relayed_before: true, attacker_reached: false });
  });
});
