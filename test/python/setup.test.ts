import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import type { SetupResult } from "../../src/python/index.js";
import { captureIO, cleanEnv, REPO_ROOT } from "./helpers.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-python-");
afterEach(() => temps.cleanup());

/** Creating a venv and installing ipykernel takes seconds to a minute on a busy two-core machine. */
const INSTALL_TEST_TIMEOUT_MS = 240_000;
const VENV_TEST_TIMEOUT_MS = 120_000;

// pip must fail fast here rather than retry; the machine's own pip config points at a local index.
const localIndexEnv = () => cleanEnv({ PIP_RETRIES: "0" });

async function setup(argv: string[], env: NodeJS.ProcessEnv, tty = false) {
  const captured = captureIO(env, "/", tty);
  const code = await runCli(["setup", ...argv], captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

/** What albedo setup says when pip reached no package index (the test below proves the wording). */
const NO_INDEX = /no package index it tried was reachable/;

/**
 * The install tests need a package index. Without one they fail, naming what to set, rather than
 * skip: a skip would hide that `albedo setup` was never tried on this machine.
 */
function requireIndex(run: { code: number; stderr: string }): void {
  if (run.code === 0 || !NO_INDEX.test(run.stderr)) return;
  throw new Error(`albedo setup reached no package index, so the install tests cannot run here: set PIP_INDEX_URL (or PIP_FIND_LINKS) to an index this machine can reach, or configure pip (pip config set global.index-url URL), and run again.\n${run.stderr}`);
}

function removePip(venv: string): void {
  const lib = join(venv, "lib");
  for (const python of readdirSync(lib)) {
    const site = join(lib, python, "site-packages");
    for (const entry of readdirSync(site).filter((name) => name === "pip" || /^pip-.*\.dist-info$/.test(name))) {
      rmSync(join(site, entry), { recursive: true, force: true });
    }
  }
}

describe("X albedo setup", () => {
  it("creates a venv with the kernel requirements, then reports 'already set up' without running pip", async () => {
    const venv = join(temps.make("albedo-setup-"), "venv");
    const first = await setup(["--venv", venv], localIndexEnv(), true);
    requireIndex(first);
    expect(first.stderr).toMatch(/albedo setup: creating a venv with python3 \.\.\. done \(\d+\.\d s\)\n/);
    expect(first.stderr).toMatch(/albedo setup: installing ipykernel>=7, pyzmq>=26, dill>=0.3.8 with pip \.\.\. done \(\d+\.\d s\)\n/);
    // pip takes seconds: a ticker counted them on the terminal, then gave way to the line above.
    expect(first.stderr).toMatch(/\r\u001b\[2Kalbedo setup: installing ipykernel>=7, pyzmq>=26, dill>=0.3.8 with pip(: [^\r]*)? \d+\.\ds/);
    expect(first.stdout).toMatch(new RegExp(`^albedo setup: ready in \\d+\\.\\d s: ${venv} has ipykernel 7\\.[^,]+, pyzmq \\d+`));
    expect(first.code).toBe(0);

    // With pip gone from the venv, any pip run would fail: a second run must not need it.
    removePip(venv);
    const second = await setup(["--venv", venv, "--json"], localIndexEnv());
    const result = JSON.parse(second.stdout) as SetupResult;
    expect(result).toMatchObject({ ok: true, action: "already", venv, python: join(venv, "bin", "python") });
    expect(result.phases.map((p) => p.phase)).toEqual(["check"]);
    expect(second.code).toBe(0);
    const piped = await setup(["--venv", venv], localIndexEnv());
    expect(piped.stderr).toBe("");
    expect(piped.stdout).toMatch(/^albedo setup: already set up: .* has ipykernel 7\.\S+, pyzmq \S+; to use it, set ALBEDO_PYTHON=.*\n$/);
  }, INSTALL_TEST_TIMEOUT_MS);

  it("says clearly, without a stack trace, when pip cannot reach a package index, and exits 1", async () => {
    const venv = join(temps.make("albedo-setup-offline-"), "venv");
    const env = cleanEnv({
      PIP_INDEX_URL: "http://127.0.0.1:9/simple",
      PIP_NO_INDEX: undefined,
      PIP_FIND_LINKS: "",
      PIP_EXTRA_INDEX_URL: "",
      PIP_CONFIG_FILE: "/dev/null",
      PIP_RETRIES: "0",
    });
    const { code, stdout, stderr } = await setup(["--venv", venv], env);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^albedo setup: pip could not download ipykernel>=7, pyzmq>=26, dill>=0.3.8: no package index it tried was reachable/m);
    expect(() => requireIndex({ code, stderr })).toThrow(/reached no package index, so the install tests cannot run here: set PIP_INDEX_URL \(or PIP_FIND_LINKS\)/);
    expect(stderr).toContain("PIP_INDEX_URL");
    expect(stderr).toContain("PIP_FIND_LINKS");
    expect(stderr).toContain("ALBEDO_PYTHON");
    expect(stderr).not.toMatch(/^\s+at /m);
  }, VENV_TEST_TIMEOUT_MS);

  it("refuses a non-empty directory that is not a venv, and a base interpreter that does not exist", async () => {
    const dir = temps.make("albedo-setup-notvenv-");
    writeFileSync(join(dir, "precious.txt"), "keep me");
    const notVenv = await setup(["--venv", dir], localIndexEnv());
    expect(notVenv.code).toBe(1);
    expect(notVenv.stderr).toContain(`albedo setup: ${dir} exists, is not empty and is not a Python venv`);
    expect(readdirSync(dir)).toEqual(["precious.txt"]);

    const fresh = join(temps.make("albedo-setup-nopython-"), "venv");
    mkdirSync(fresh);
    const noPython = await setup(["--venv", fresh, "--python", "/nonexistent/python3"], localIndexEnv());
    expect(noPython.code).toBe(1);
    expect(noPython.stderr).toContain('no Python interpreter "/nonexistent/python3" was found');
    expect(noPython.stderr).toContain("fix: install Python 3.9 or newer, or pass --python PATH");
  });

  it("shows --help", async () => {
    const { code, stdout } = await setup(["--help"], cleanEnv({}));
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage: albedo setup \[options\]/);
    for (const option of ["--python PATH", "--venv DIR", "--json", "--verbose"]) expect(stdout).toContain(option);
  });
});

describe("X npm install runs setup", () => {
  it("skips the Python setup when ALBEDO_SKIP_SETUP=1 and still exits 0", () => {
    const run = spawnSync(process.execPath, ["scripts/postinstall.mjs"], { cwd: REPO_ROOT, env: cleanEnv({ ALBEDO_SKIP_SETUP: "1" }), encoding: "utf8" });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain("ALBEDO_SKIP_SETUP=1: skipping the Python setup");
  });

  it("says what it does on the terminal though npm keeps the script's stderr to itself, setup's own lines included", () => {
    // `script` gives the run a terminal of its own; stderr goes to /dev/null, as npm's pipe hides it.
    const state = temps.make("albedo-postinstall-");
    writeFileSync(join(state, "settings.json"), "{ not json");
    const run = spawnSync("script", ["-qec", `${JSON.stringify(process.execPath)} scripts/postinstall.mjs 2>/dev/null`, "/dev/null"], {
      cwd: REPO_ROOT,
      env: cleanEnv({ ALBEDO_HOME: state }),
      encoding: "utf8",
    });
    expect(run.status).toBe(0);
    const terminal = run.stdout.replace(/\r\n/g, "\n");
    expect(terminal).toMatch(/^albedo: preparing the Python environment kernels run in \(albedo setup: .*\) \.\.\.\n/);
    expect(terminal).toMatch(/^albedo setup: settings file .*settings\.json: not valid JSON/m);
    expect(terminal).toMatch(/^albedo: the Python environment for kernels is not ready; the JavaScript part is installed\.\n/m);
  });
});
