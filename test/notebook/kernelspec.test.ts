import { existsSync } from "node:fs";
import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findKernelSpec, type KernelClient } from "../../src/kernel/index.js";
import { call, makeDirs, ROOT, type Dirs } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { testPython } from "../kernel/python.js";
import { albedo, installSpec, run, startSpecKernel as startSpecKernelWith } from "./support.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { writeSkill } from "../support/skills.js";
import { tempDir } from "../support/tempDirs.js";
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempRoot(): Promise<string> {
  const { dir, remove } = tempDir("nb-");
  cleanups.push(async () => remove());
  return dir;
}

async function dirsFor(): Promise<Dirs> {
  const dirs = await makeDirs();
  cleanups.push(() => dirs.cleanup());
  return dirs;
}

async function startSpecKernel(env: NodeJS.ProcessEnv, cwd: string, runDir: string, extraEnv: Record<string, string>): Promise<{ kernel: KernelClient; stderr: () => string }> {
  return startSpecKernelWith(env, cwd, runDir, extraEnv, cleanups);
}

describe("K-13 albedo kernelspec install", () => {
  it("writes a kernel.json that Jupyter's search path finds, running albedo.launch with the kernel interpreter", async () => {
    const root = await tempRoot();
    const env = installSpec(root);
    const entry = await findKernelSpec("albedo", env);
    expect(entry?.file).toBe(join(root, "p", "share", "jupyter", "kernels", "albedo", "kernel.json"));
    expect(entry!.spec.displayName).toBe("albedo (Python)");
    expect(entry!.spec.language).toBe("python");
    expect(entry!.spec.interruptMode).toBe("signal");
    expect(entry!.spec.argv).toEqual([testPython(), "-m", "albedo.launch", "-f", "{connection_file}"]);
    expect(entry!.spec.env.PYTHONPATH).toBe(join(ROOT.replace(/\/$/, ""), "kernel"));
    expect(entry!.spec.env.ALBEDO_INSTALL).toBe(ROOT.replace(/\/$/, ""));
    // Front ends show these beside the kernel's name.
    for (const logo of ["logo-32x32.png", "logo-64x64.png", "logo-svg.svg"]) expect(existsSync(join(entry!.dir, logo)), logo).toBe(true);
    const listed = albedo(["kernelspec", "list", "--json"], env);
    expect(JSON.parse(listed.stdout).kernelspecs).toContainEqual({ name: "albedo", display_name: "albedo (Python)", file: entry!.file });
  });

  it("installs for the user under JUPYTER_DATA_DIR with --name and --display-name", async () => {
    const root = await tempRoot();
    const result = albedo(["kernelspec", "install", "--name", "Nb", "--display-name", "Notebook albedo", "--json"], { ...process.env, JUPYTER_DATA_DIR: join(root, "data") });
    expect(result.status).toBe(0);
    const file = join(root, "data", "kernels", "nb", "kernel.json");
    expect(JSON.parse(result.stdout).file).toBe(file);
    expect(JSON.parse(await readFile(file, "utf8")).display_name).toBe("Notebook albedo");
  });

  it("--workspace DIR pins every notebook of the kernelspec to DIR (ALBEDO_WORKSPACE in its env); a missing DIR is a usage error", async () => {
    const root = await tempRoot();
    const env = { ...process.env, JUPYTER_DATA_DIR: join(root, "data") };
    const result = albedo(["kernelspec", "install", "--name", "proj", "--workspace", root], env);
    expect(result.status).toBe(0);
    expect(JSON.parse(await readFile(join(root, "data", "kernels", "proj", "kernel.json"), "utf8")).env.ALBEDO_WORKSPACE).toBe(root);
    const missing = albedo(["kernelspec", "install", "--name", "other", "--workspace", join(root, "nowhere")], env);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("--workspace");
  });

  it("refuses --user with --prefix and a bad name (exit 2), and documents itself in --help", async () => {
    const root = await tempRoot();
    expect(albedo(["kernelspec", "install", "--user", "--prefix", root]).status).toBe(2);
    expect(albedo(["kernelspec", "install", "--prefix", root, "--name", "a/b"]).status).toBe(2);
    expect(existsSync(join(root, "share"))).toBe(false);
    const help = albedo(["kernelspec", "install", "--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("--prefix DIR");
  });
});

describe("K-13 K-14 a kernel started from the kernelspec is a daemon session's kernel", () => {
  // The daemon serves dirs made by dirsFor, removed by the file's cleanups after this kill.
  const fixture = daemonFixture({ signal: "SIGKILL" });

  it("gets skills and commands from a session whose sandboxed kernel it relays to, closed when the kernel exits", async () => {
    const dirs = await dirsFor();
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", { body: "Demo instructions here.\n" });
    const daemon = await fixture.start(undefined, undefined, { dirs });
    const env = installSpec(dirs.root);
    const { kernel } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), { HOME: dirs.home, ALBEDO_HOME: dirs.state });

    const catalog = await run(kernel, "c = await commands.catalog()\nprint(sorted(x['name'] for x in c['commands']))");
    expect(catalog.status).toBe("ok");
    expect(catalog.text).toContain("'/demo'");
    const activation = await run(kernel, "a = await commands.invoke('/demo', 'go')\nprint(a['name'], a['arguments'], a['instructions'].strip())");
    expect(activation.text).toBe("demo go Demo instructions here.\n");
    const listed = await run(kernel, "print(await skills.list())");
    expect(listed.text).toContain("'demo'");

    const sessions = (await call(daemon, "GET", "/sessions")).body.sessions;
    expect(sessions).toEqual([expect.objectContaining({ workspace: dirs.workspace, client: "notebook", kernel: expect.objectContaining({ status: expect.stringMatching(/^(ready|idle)$/), sandbox: "bwrap" }) })]);
    const id = sessions[0].id as string;
    const resource = await call(daemon, "GET", `/sessions/${id}`);
    expect(resource.body.rpc).toBeUndefined();
    expect(resource.body.relay).toBeUndefined();
    // The kernel is the session's own: the daemon's clients reach the notebook's namespace too.
    await run(kernel, "shared = 41");
    const executed = await call(daemon, "POST", `/sessions/${id}/execute`, { code: "shared + 1" });
    expect(executed.status).toBe(200);
    expect(executed.body.outputs[0].content.data["text/plain"]).toBe("42");

    await kernel.shutdown();
    await poll(async () => (await call(daemon, "GET", "/sessions")).body.sessions.length === 0, { what: "the daemon to close the notebook's session" });
    // The registry forgets the session first, then closes it: its run dir goes a moment later.
    await poll(() => !existsSync(join(dirs.state, "run", id)), { what: "the notebook session's run dir to go" });
  });

  it("POST /sessions validates kernel, kernel_pid and relay", async () => {
    const dirs = await dirsFor();
    const daemon = await fixture.start(undefined, undefined, { dirs });
    const post = (extra: Record<string, unknown>) => call(daemon, "POST", "/sessions", { workspace: dirs.workspace, ...extra });
    for (const [extra, field] of [
      [{ kernel: "external" }, "kernel_pid"],
      [{ kernel: "external", kernel_pid: -1 }, "kernel_pid"],
      [{ kernel: "external", kernel_pid: "12" }, "kernel_pid"],
      [{ kernel: "elsewhere", kernel_pid: process.pid }, "kernel"],
      [{ kernel_pid: process.pid }, "kernel_pid"],
      [{ kernel: "external", kernel_pid: process.pid, pid: 1 }, "pid"],
      [{ kernel: "relay" }, "relay"],
      [{ relay: { key: "k", signature_scheme: "hmac-sha256", launcher_pid: process.pid } }, "relay"],
      [{ kernel: "relay", relay: { key: "", signature_scheme: "hmac-sha256", launcher_pid: process.pid } }, "relay.key"],
      [{ kernel: "relay", relay: { key: "a b", signature_scheme: "hmac-sha256", launcher_pid: process.pid } }, "relay.key"],
      [{ kernel: "relay", relay: { key: "k".repeat(257), signature_scheme: "hmac-sha256", launcher_pid: process.pid } }, "relay.key"],
      [{ kernel: "relay", relay: { key: "k", signature_scheme: "hmac-md5", launcher_pid: process.pid } }, "relay.signature_scheme"],
      [{ kernel: "relay", relay: { key: "k", signature_scheme: "hmac-sha256" } }, "relay.launcher_pid"],
      [{ kernel: "relay", relay: { key: "k", signature_scheme: "hmac-sha256", launcher_pid: 2 ** 22 + 7 } }, "relay.launcher_pid"],
      [{ kernel: "relay", kernel_pid: process.pid, relay: { key: "k", signature_scheme: "hmac-sha256", launcher_pid: process.pid } }, "kernel_pid"],
      [{ kernel: "relay", relay: { key: "k", signature_scheme: "hmac-sha256", launcher_pid: process.pid, cwd: "notebooks" } }, "relay.cwd"],
      [{ kernel: "relay", relay: { key: "k", signature_scheme: "hmac-sha256", launcher_pid: process.pid, cwd: join(dirs.workspace, "missing") } }, "relay.cwd"],
      // The kernel's working directory must lie inside the workspace it may write.
      [{ kernel: "relay", relay: { key: "k", signature_scheme: "hmac-sha256", launcher_pid: process.pid, cwd: dirs.root } }, "relay.cwd"],
    ] as const) {
      const answer = await post(extra);
      expect(answer.status, JSON.stringify(extra)).toBe(400);
      expect(answer.body.field).toBe(field);
    }
    const made = await post({ kernel: "external", kernel_pid: process.pid });
    expect(made.status).toBe(201);
    expect(made.body.kernel).toEqual({ status: "external", pid: null, sandbox_notes: [], sandbox: "none", warm: false, checkpoints: false, restore: null });
    expect(made.body.rpc).toEqual(expect.objectContaining({ endpoint: expect.stringMatching(/^ipc:\/\//), token: expect.any(String), extensions: ["python", "skills"] }));
    const relayed = await post({ kernel: "relay", relay: { key: "the-notebook-key", signature_scheme: "hmac-sha256", launcher_pid: process.pid } });
    expect(relayed.status).toBe(201);
    const socket = expect.stringMatching(/^ipc:\/\/\/.+-\d$/);
    expect(relayed.body.relay).toEqual({ shell: socket, iopub: socket, stdin: socket, control: socket, hb: socket, kernel_pid: expect.any(Number) });
    expect(relayed.body.rpc).toBeUndefined();
    expect(relayed.body.kernel).toMatchObject({ status: expect.stringMatching(/^(ready|idle)$/), sandbox: "bwrap" });
  });
});

describe("K-13 the launcher starts a daemon when none runs", () => {
  it("starts `albedo serve` for the state dir, detached, and joins it", async () => {
    const dirs = await dirsFor();
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
    const env = installSpec(dirs.root);
    // Registered before the kernel, so it runs after the kernel's shutdown: the daemon is then no one's child.
    cleanups.push(async () => {
      const info = JSON.parse(await readFile(join(dirs.state, "daemon.json"), "utf8").catch(() => "null")) as { pid: number } | null;
      if (info === null || !alive(info.pid)) return;
      process.kill(info.pid, "SIGTERM");
      await poll(() => !alive(info.pid), { what: "the started daemon to exit" });
    });
    const { kernel } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), { HOME: dirs.home, ALBEDO_HOME: dirs.state });
    const result = await run(kernel, "print((await commands.invoke('/demo'))['name'])");
    expect(result).toEqual({ status: "ok", text: "demo\n" });
    const info = JSON.parse(await readFile(join(dirs.state, "daemon.json"), "utf8")) as { url: string; pid: number };
    const token = (await readFile(join(dirs.state, "daemon.token"), "utf8")).trim();
    const sessions = (await call({ url: info.url, token }, "GET", "/sessions")).body.sessions;
    expect(sessions).toEqual([expect.objectContaining({ workspace: dirs.workspace, kernel: expect.objectContaining({ sandbox: "bwrap" }) })]);
    // The daemon writes its own log (`--log-file`), private, with timestamped entries.
    expect(await readFile(join(dirs.state, "daemon.log"), "utf8")).toMatch(/^\S+Z info listening on /m);
    // Started on demand: it goes away by itself once no notebook has used it for a while.
    expect(await readFile(join(dirs.state, "daemon.log"), "utf8")).toMatch(/^\S+Z info exits after 15 min without sessions$/m);
    expect((await stat(join(dirs.state, "daemon.log"))).mode & 0o777).toBe(0o600);
  });
});

describe("K-13 the kernel still starts when no daemon can be reached", () => {
  it("prints one line saying why, and runs as plain Python without skills", async () => {
    const dirs = await dirsFor();
    const env = installSpec(dirs.root);
    const nowhere = join(dirs.root, "no-install");
    await mkdir(nowhere);
    const { kernel, stderr } = await startSpecKernel(env, dirs.workspace, join(dirs.root, "k"), { HOME: dirs.home, ALBEDO_HOME: dirs.state, ALBEDO_INSTALL: nowhere });
    const result = await run(kernel, "print(1 + 1, 'skills' in dir(), 'commands' in dir())");
    expect(result).toEqual({ status: "ok", text: "2 False False\n" });
    const lines = stderr().split("\n").filter((line) => line.startsWith("albedo:"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/starting without a sandbox, `skills` and `commands`: `albedo serve` exited .*Run `albedo serve`/);
    expect(existsSync(join(dirs.state, "daemon.json"))).toBe(false);
  });
});
