import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { checkStateDir } from "../../src/python/doctor.js";
import type { DoctorReport } from "../../src/python/index.js";
import { bareVenv, captureIO, cleanEnv, MAIN_VENV_PYTHON } from "./helpers.js";
import { tempDirs } from "../support/tempDirs.js";

// The "no kernelspecs" case needs a machine whose system-wide Jupyter dirs hold none.
const SYSTEM_KERNELS = ["/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels"].some((dir) => existsSync(dir));
const CHECK_NAMES = ["node", "python", "ipykernel", "pyzmq", "packages", "kernelspecs", "state-dir", "bubblewrap", "albedo-kernelspec", "notebook-sandbox", "network", "package-layer", "daemon"];

const temps = tempDirs("albedo-python-");
const venvTemps = tempDirs("albedo-python-");
let barePython: string;

beforeAll(() => {
  barePython = bareVenv(join(venvTemps.make(), "bare"));
});
afterAll(() => venvTemps.cleanup());
afterEach(() => temps.cleanup());

/** An isolated environment: temp home, state dir (0700), Jupyter dirs and a PATH holding only `bin`. */
function sandboxEnv(overrides: Record<string, string | undefined> = {}) {
  const root = temps.make("albedo-doctor-");
  const home = join(root, "home");
  const state = join(root, "state");
  const bin = join(root, "bin");
  for (const dir of [home, bin]) mkdirSync(dir);
  mkdirSync(state, { mode: 0o700 });
  const env = cleanEnv({ HOME: home, ALBEDO_HOME: state, JUPYTER_DATA_DIR: join(root, "jupyter"), PATH: bin, ALBEDO_PYTHON: MAIN_VENV_PYTHON, ...overrides });
  return { root, home, state, bin, env };
}

function fakeBwrap(bin: string, script: string): void {
  writeFileSync(join(bin, "bwrap"), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
}

async function doctor(env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; report: DoctorReport; stdout: string }> {
  const captured = captureIO(env, cwd);
  const code = await runCli(["doctor", "--json"], captured.io);
  return { code, report: JSON.parse(captured.stdout()) as DoctorReport, stdout: captured.stdout() };
}

const check = (report: DoctorReport, name: string) => report.checks.find((c) => c.name === name)!;

describe("X albedo doctor", () => {
  it("prints JSON {ok, checks:[{name,status,detail,fix}]} with every check, and exits 0 when none fails", async () => {
    const { root, env, bin } = sandboxEnv();
    fakeBwrap(bin, "exit 0");
    const { code, report } = await doctor(env, root);
    expect(Object.keys(report).sort()).toEqual(["checks", "ok"]);
    expect(report.checks.map((c) => c.name)).toEqual(CHECK_NAMES);
    for (const c of report.checks) {
      expect(Object.keys(c).sort()).toEqual(["detail", "fix", "name", "status"]);
      expect(["ok", "warn", "fail"]).toContain(c.status);
      expect(typeof c.detail).toBe("string");
      expect(c.status === "ok" ? c.fix === null : typeof c.fix === "string" && c.fix.length > 0).toBe(true);
    }
    expect(check(report, "ipykernel")).toMatchObject({ status: "ok", detail: expect.stringMatching(/^ipykernel 7\./) });
    expect(check(report, "bubblewrap").status).toBe("ok");
    expect(check(report, "state-dir").status).toBe("ok");
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
  });

  it("fails the ipykernel and pyzmq checks for an interpreter without them, and exits 1", async () => {
    const { root, env } = sandboxEnv({ ALBEDO_PYTHON: barePython });
    const { code, report } = await doctor(env, root);
    expect(check(report, "python").status).toBe("ok");
    expect(check(report, "ipykernel")).toMatchObject({ status: "fail", detail: expect.stringMatching(/not importable: ModuleNotFoundError/) });
    expect(check(report, "ipykernel").fix).toContain(`${barePython} -m pip install`);
    expect(check(report, "pyzmq").status).toBe("fail");
    expect(report.ok).toBe(false);
    expect(code).toBe(1);
  });

  it("fails the python check for a missing ALBEDO_PYTHON", async () => {
    const { root, env } = sandboxEnv({ ALBEDO_PYTHON: "/nonexistent/python" });
    const { code, report } = await doctor(env, root);
    expect(check(report, "python")).toMatchObject({ status: "fail", detail: "ALBEDO_PYTHON=/nonexistent/python does not exist" });
    expect(code).toBe(1);
  });

  it("warns when bwrap is missing (fix: apt-get install bubblewrap) and when it cannot create a sandbox", async () => {
    const missing = sandboxEnv();
    expect(check((await doctor(missing.env, missing.root)).report, "bubblewrap")).toMatchObject({ status: "warn", fix: "apt-get install bubblewrap, or `albedo settings set sandbox off`" });
    const broken = sandboxEnv();
    fakeBwrap(broken.bin, "echo 'bwrap: No permissions to create new namespace' >&2; exit 1");
    const { report, code } = await doctor(broken.env, broken.root);
    expect(check(report, "bubblewrap")).toMatchObject({ status: "warn", detail: expect.stringMatching(/cannot start a sandbox \(exit 1: bwrap: No permissions/) });
    expect(code).toBe(0);
  });

  it("lists kernelspec names, and warns (not fails) when there are none", async () => {
    const withSpec = sandboxEnv({ JUPYTER_PREFER_ENV_PATH: "0" });
    const dir = join(withSpec.env.JUPYTER_DATA_DIR!, "kernels", "zeta");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "kernel.json"), JSON.stringify({ argv: ["z", "{connection_file}"], display_name: "Z", language: "z" }));
    expect(check((await doctor(withSpec.env, withSpec.root)).report, "kernelspecs").detail).toContain("zeta");
    if (SYSTEM_KERNELS) return;
    const none = sandboxEnv({ ALBEDO_PYTHON: barePython });
    expect(check((await doctor(none.env, none.root)).report, "kernelspecs").status).toBe("warn");
  });

  it("prints a readable table with a fix line under each problem", async () => {
    const { root, env } = sandboxEnv();
    const captured = captureIO(env, root);
    await runCli(["doctor"], captured.io);
    // Details wrap to 80 columns under their column; the fix comes last.
    expect(captured.stdout()).toMatch(/^warn  bubblewrap +bubblewrap \(bwrap\) not found on PATH[^]*?\n +fix: apt-get install bubblewrap, or `albedo settings\n +set sandbox off`$/m);
    expect(captured.stdout()).toMatch(/albedo doctor: 0 failed, \d+ warnings?, \d+ ok\n$/);
  });

  it("shows --help", async () => {
    const captured = captureIO(cleanEnv({}), "/");
    expect(await runCli(["doctor", "--help"], captured.io)).toBe(0);
    expect(captured.stdout()).toMatch(/^usage: albedo doctor \[options\]/);
    expect(captured.stdout()).toContain("--json");
  });
});

describe("X doctor state dir", () => {
  it("accepts a missing state dir under a writable parent, refuses a file, and fails group/world-writable modes", () => {
    const root = temps.make("albedo-state-");
    expect(checkStateDir(join(root, "later", "state"))).toMatchObject({ status: "ok", detail: expect.stringContaining("will be created") });
    writeFileSync(join(root, "file"), "");
    expect(checkStateDir(join(root, "file"))).toMatchObject({ status: "fail", detail: `${join(root, "file")} is not a directory` });
    const open = join(root, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(checkStateDir(open)).toMatchObject({ status: "fail", fix: `chmod 700 ${open}` });
    chmodSync(open, 0o700);
    expect(checkStateDir(open).status).toBe("ok");
  });
});

describe("N-1 albedo doctor says what the network is: off, a policy of N hosts, or open and unsafe", () => {
  it("reads the global setting, and warns when kernels would run unsandboxed with a policy", async () => {
    const { root, env, bin, state } = sandboxEnv();
    fakeBwrap(bin, "exit 0");
    expect(check((await doctor(env, root)).report, "network")).toMatchObject({ status: "ok", detail: expect.stringMatching(/^off \(no host is reachable\)/) });
    writeFileSync(join(state, "settings.json"), JSON.stringify({ network: { allow: ["pypi.org", "*.example.com"], presets: ["npm"] } }));
    expect(check((await doctor(env, root)).report, "network")).toMatchObject({ status: "ok", detail: expect.stringMatching(/^a policy of 4 hosts through each session's egress proxy/) });
    writeFileSync(join(state, "settings.json"), JSON.stringify({ network: true }));
    expect(check((await doctor(env, root)).report, "network")).toMatchObject({ status: "warn", detail: expect.stringMatching(/^open \(the host's network, unfiltered: unsafe/), fix: expect.stringContaining("albedo network reset") });
    writeFileSync(join(state, "settings.json"), JSON.stringify({ network: { allow: ["pypi.org"] }, sandbox: "off" }));
    expect(check((await doctor(env, root)).report, "network")).toMatchObject({ status: "warn", detail: expect.stringContaining("the setting is not enforced") });
  });
});
