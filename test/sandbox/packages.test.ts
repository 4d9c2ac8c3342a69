/**
 * The workspace's package layer (N-5) end to end: a real daemon over HTTP, real sandboxed kernels,
 * the session's egress proxy, and a PEP 503 index on 127.0.0.2 serving wheels built here. `%pip
 * install` and `!pip install` in a cell install into the workspace's layer in the state dir, which
 * a later session of the workspace sees and another workspace's does not; the layer's quota is
 * enforced; `albedo doctor` lists the layer; no host process may start from it.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { RequestListener } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpApprovals, mcpHostPlaces, resolveServers } from "../../src/mcp/index.js";
import { managedVenvDir, venvPython } from "../../src/python/index.js";
import { packageLayerDir } from "../../src/sandbox/index.js";
import { call, envFor, type DaemonProcess } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { startServer, type TestServer } from "../network/support.js";
import { runAlbedo, runProgram } from "../support/cli.js";
import { tempDirs } from "../support/tempDirs.js";

const fixture = daemonFixture();
const TEST_TIMEOUT_MS = 240_000;
const temps = tempDirs("alb-packages-");
const BUILD_WHEEL = fileURLToPath(new URL("./build_wheel.py", import.meta.url));
/** Bytes of the padded wheel's data file: over a 1 MiB quota once installed. */
const PAD_BYTES = 3 * 1024 * 1024;

interface Wheel {
  readonly project: string;
  readonly file: string;
  readonly bytes: Buffer;
}
let wheels: Wheel[] = [];
let index: TestServer;

/** Builds a wheel with the managed environment's Python (not the code under test). */
async function buildWheel(dir: string, project: string, pad: number, ...requires: string[]): Promise<Wheel> {
  const built = await runProgram(venvPython(managedVenvDir()), [BUILD_WHEEL, dir, project, "1.0", String(pad), ...requires], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  expect(built.code, built.stderr).toBe(0);
  const file = built.stdout.trim();
  return { project, file, bytes: readFileSync(join(dir, file)) };
}

/** A PEP 503 index of the built wheels, on plain HTTP. */
const indexHandler: RequestListener = (req, res) => {
  for (const wheel of wheels) {
    if (req.url === `/simple/${wheel.project}/`) {
      const sha = createHash("sha256").update(wheel.bytes).digest("hex");
      return void res.writeHead(200, { "content-type": "text/html" }).end(`<html><body><a href="/files/${wheel.file}#sha256=${sha}">${wheel.file}</a></body></html>`);
    }
    if (req.url === `/files/${wheel.file}`) return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(wheel.bytes);
  }
  res.writeHead(404).end("not here\n");
};

beforeAll(async () => {
  const dir = temps.make();
  // albedo-probe needs pyzmq, which the managed environment has: pip must count it as installed.
  wheels = [await buildWheel(dir, "albedo-probe", 0, "pyzmq"), await buildWheel(dir, "albedo-second", 0), await buildWheel(dir, "albedo-big", PAD_BYTES)];
  index = await startServer("127.0.0.2", indexHandler);
}, TEST_TIMEOUT_MS);
afterAll(async () => {
  await index?.close();
  temps.cleanup();
});

const indexHost = () => `127.0.0.2:${index.port}`;
const pipArgs = (scheme = "http", retries = 0) => `--index-url ${scheme}://${indexHost()}/simple/ --retries ${retries} --timeout 20 --no-cache-dir --disable-pip-version-check`;

function writeGlobal(state: string, settings: unknown): void {
  writeFileSync(join(state, "settings.json"), JSON.stringify(settings));
}

async function openSession(daemon: DaemonProcess, workspace: string): Promise<string> {
  const opened = await call(daemon, "POST", "/sessions", { workspace });
  expect(opened.status, JSON.stringify(opened.body)).toBe(201);
  expect(opened.body.kernel.sandbox).toBe("bwrap");
  return opened.body.id as string;
}

/** Everything a cell wrote on stdout and stderr, and its error's name if it raised. */
async function run(daemon: DaemonProcess, id: string, code: string): Promise<string> {
  const answer = await call(daemon, "POST", `/sessions/${id}/execute`, { code });
  const outputs = answer.body.outputs as { msg_type: string; content: { text?: string; ename?: string } }[];
  return outputs.map((o) => (o.msg_type === "stream" ? (o.content.text ?? "") : o.msg_type === "error" ? `${o.content.ename}\n` : "")).join("");
}

const IMPORT_PROBE = "import albedo_probe\nprint(albedo_probe.VALUE)";

describe("N-5 %pip install in a cell installs into the workspace's package layer, which later sessions of that workspace see", () => {
  it("%pip and !pip install from an allowed index; a new session imports without installing; another workspace does not see it; doctor lists the layer", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeGlobal(dirs.state, { network: { allow: [indexHost()] } });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const first = await openSession(daemon, dirs.workspace);

    const installed = await run(daemon, first, `%pip install ${pipArgs()} albedo-probe`);
    expect(installed).toContain("Successfully installed albedo-probe-1.0");
    // The managed environment's packages count as installed: pyzmq is not fetched again.
    expect(installed).toMatch(/Requirement already satisfied: pyzmq in .*\.venv/);
    expect(await run(daemon, first, IMPORT_PROBE)).toBe("42\n");
    const shell = await run(daemon, first, `!pip install ${pipArgs()} albedo-second\n!python -c "import albedo_second, albedo_probe; print(albedo_second.VALUE + albedo_probe.VALUE)"`);
    expect(shell).toContain("Successfully installed albedo-second-1.0");
    expect(shell).toMatch(/^84\r?$/m);

    // On the host: in the state dir, in this workspace's layer, and nowhere in the workspace.
    const layer = packageLayerDir(dirs.state, dirs.workspace);
    const site = join(layer, "lib", readdirSync(join(layer, "lib"))[0]!, "site-packages");
    expect(readdirSync(site)).toEqual(expect.arrayContaining(["albedo_probe", "albedo_second"]));
    expect(readdirSync(site).some((name) => name.startsWith("pyzmq") || name === "zmq")).toBe(false);
    expect(readdirSync(dirs.workspace).some((name) => name.includes("albedo_probe"))).toBe(false);

    const second = await openSession(daemon, dirs.workspace);
    expect(await run(daemon, second, IMPORT_PROBE)).toBe("42\n");

    const otherWorkspace = join(dirs.root, "other");
    mkdirSync(otherWorkspace);
    const other = await openSession(daemon, otherWorkspace);
    expect(await run(daemon, other, IMPORT_PROBE)).toBe("ModuleNotFoundError\n");

    const doctor = await runAlbedo(["doctor", "--json"], { cwd: dirs.workspace, env: envFor(dirs) });
    const check = (JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.find((c) => c.name === "package-layer");
    expect(check, doctor.stdout).toMatchObject({ status: "ok" });
    expect(check!.detail).toMatch(new RegExp(`${layer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} holds [\\d.]+ (KiB|MiB) of 2048 MiB \\(limits\\.packagesMB\\)`));

    const cleared = await runAlbedo(["packages", "clear"], { cwd: dirs.workspace, env: envFor(dirs) });
    expect(cleared.stdout).toContain(`cleared the package layer of ${dirs.workspace} (${layer}`);
    expect(existsSync(layer)).toBe(false);
    expect(await run(daemon, await openSession(daemon, dirs.workspace), IMPORT_PROBE)).toBe("ModuleNotFoundError\n");
  });

  it("a policy that does not allow the index: pip fails and its output carries the denial line", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeGlobal(dirs.state, { network: { allow: ["127.0.0.3:1"] } });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const id = await openSession(daemon, dirs.workspace);
    // pip shows a refused CONNECT's line (an index is HTTPS) in its retry warning.
    const refused = await run(daemon, id, `%pip install ${pipArgs("https", 1)} albedo-probe`);
    expect(refused).toContain(`albedo: ${indexHost()} is not allowed`);
    expect(refused).not.toContain("Successfully installed");
  });
});

describe("N-5 two sessions of one workspace installing at once take turns", () => {
  it("a cell that runs pip waits for the other session's pip cell to end: the two never overlap", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeGlobal(dirs.state, { network: { allow: [indexHost()] } });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const [a, b] = [await openSession(daemon, dirs.workspace), await openSession(daemon, dirs.workspace)];
    const span = (text: string) => text.match(/^(start|end) [\d.]+/gm)!.map((line) => Number(line.split(" ")[1]));
    const slow = run(daemon, a, "import time\nprint('start', time.time())\ntime.sleep(4)\nprint('end', time.time())  # as long as a pip install");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const other = await run(daemon, b, `import time\nprint('start', time.time())\n%pip install ${pipArgs()} albedo-second\nprint('end', time.time())`);
    expect(other).toContain("Successfully installed albedo-second-1.0");
    const [aStart, aEnd] = span(await slow);
    const [bStart, bEnd] = span(other);
    expect(bStart! >= aEnd! || aStart! >= bEnd!, JSON.stringify({ aStart, aEnd, bStart, bEnd })).toBe(true);
  });
});

describe("N-5 the package layer's quota (limits.packagesMB)", () => {
  it("an install that takes the layer over its quota is removed with a line naming the bound; a layer found over it is read-only for the next session", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeGlobal(dirs.state, { network: { allow: [indexHost()] }, limits: { packagesMB: 1 } });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const id = await openSession(daemon, dirs.workspace);
    const over = await run(daemon, id, `%pip install ${pipArgs()} albedo-big`);
    expect(over).toMatch(/albedo: the package layer holds [\d.]+ MiB, over its quota of 1\.0 MiB \(limits\.packagesMB\); removed what this cell installed: albedo_big, albedo_big-1\.0\.dist-info/);
    expect(await run(daemon, id, "import albedo_big")).toBe("ModuleNotFoundError\n");
    const layer = packageLayerDir(dirs.state, dirs.workspace);
    expect(existsSync(join(layer, "lib", readdirSync(join(layer, "lib"))[0]!, "site-packages", "albedo_big"))).toBe(false);

    // The kernel fills the layer by other means: the next session finds it over its quota and binds it read-only.
    expect(await run(daemon, id, "import os\nopen(os.path.join(os.environ['ALBEDO_PACKAGES_DIR'], 'filler'), 'w').write('x' * 2_000_000)\nprint('ok')")).toBe("ok\n");
    const next = await openSession(daemon, dirs.workspace);
    expect(daemon.stderr()).toMatch(/packages: the package layer .* holds 1\.\d MiB, over its quota of 1\.0 MiB \(limits\.packagesMB\); it is read-only in this session/);
    const refused = await run(daemon, next, `%pip install ${pipArgs()} albedo-probe`);
    expect(refused).toContain("Read-only file system");
    expect(refused).toContain("albedo: this workspace's package layer is over its quota (limits.packagesMB) and read-only in this session");
  });
});

describe("N-5 C2 the host never runs anything from a package layer", () => {
  it("an MCP server whose command, or search path, lies in a layer is refused", async () => {
    const state = temps.make();
    const workspace = temps.make();
    const layer = packageLayerDir(state, workspace);
    mkdirSync(join(layer, "bin"), { recursive: true });
    writeFileSync(join(layer, "bin", "tool"), "#!/bin/sh\n", { mode: 0o755 });
    const places = mcpHostPlaces({ workspace, stateDir: state, home: temps.make(), runDir: temps.make(), sandboxed: false });
    const approvals = await McpApprovals.load(state, workspace);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
    for (const [entry, message] of [
      [{ command: join(layer, "bin", "tool") }, /its command .*bin\/tool lies where the session's kernel can write/],
      [{ command: "python3", env: { PYTHONPATH: join(layer, "lib") } }, /its env PYTHONPATH names .* where the session's kernel can write/],
    ] as const) {
      const resolved = resolveServers({ ...places, workspace, approvals, global: { servers: { s: entry } }, env });
      expect(resolved.servers, JSON.stringify(entry)).toEqual([]);
      expect(resolved.diagnostics.map((item) => item.message).join("\n")).toMatch(message);
    }
  });
});
