import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import type { DoctorReport, SetupResult } from "../../src/python/index.js";
import { bareVenv, captureIO, cleanEnv, MAIN_VENV_PYTHON } from "./helpers.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-packages-");
afterEach(() => temps.cleanup());

/** pip installing two small wheels from the local index takes seconds on a busy two-core machine. */
const INSTALL_TEST_TIMEOUT_MS = 180_000;

/**
 * A temp venv (never the managed one) whose interpreter also sees the project venv's site-packages
 * through a .pth file: the kernel requirements and pip are met without installing them, so only the
 * extra packages are installed, into this venv's own site-packages.
 */
function venvOverMain(root: string): { venv: string; site: string } {
  const venv = join(root, "venv");
  const python = bareVenv(venv);
  const site = execFileSync(python, ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], { encoding: "utf8" }).trim();
  const mainSite = execFileSync(MAIN_VENV_PYTHON, ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], { encoding: "utf8" }).trim();
  writeFileSync(join(site, "project-venv.pth"), `${mainSite}\n`);
  return { venv, site };
}

/** A state dir (0700) whose global settings are `settings`. */
function stateWith(root: string, settings: unknown): string {
  const state = join(root, "state");
  mkdirSync(state, { mode: 0o700 });
  writeFileSync(join(state, "settings.json"), typeof settings === "string" ? settings : JSON.stringify(settings));
  return state;
}

async function albedo(argv: string[], env: NodeJS.ProcessEnv, tty = false) {
  const captured = captureIO(env, "/", tty);
  const code = await runCli(argv, captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

const installed = (site: string, name: string) => readdirSync(site).some((entry) => entry.toLowerCase().startsWith(`${name}-`) && entry.endsWith(".dist-info"));

describe("X D-4 albedo setup --with and python.packages install packages to draw with", () => {
  it("installs --with's packages and the global python.packages into the venv, says so on a terminal, is quiet piped, and then has nothing to do", async () => {
    const root = temps.make();
    const { venv, site } = venvOverMain(root);
    const env = cleanEnv({ PIP_RETRIES: "0", ALBEDO_HOME: stateWith(root, { python: { packages: ["tabulate"] } }) });
    const first = await albedo(["setup", "--venv", venv, "--with", "iniconfig"], env, true);
    expect(first.stderr).toMatch(/albedo setup: installing iniconfig, tabulate with pip \.\.\. done \(\d+\.\d s\)\n/);
    expect(first.stderr).not.toContain("installing ipykernel");
    expect(first.stdout).toMatch(new RegExp(`^albedo setup: ready in \\d+\\.\\d s: ${venv} has ipykernel 7\\.\\S+, pyzmq \\S+, iniconfig \\S+, tabulate \\S+; to use it`));
    expect(first.code).toBe(0);
    expect([installed(site, "iniconfig"), installed(site, "tabulate")]).toEqual([true, true]);

    const again = await albedo(["setup", "--venv", venv, "--with", "iniconfig", "--json"], env);
    const result = JSON.parse(again.stdout) as SetupResult;
    expect(result).toMatchObject({ ok: true, action: "already", packages: [{ requirement: "iniconfig", met: true }, { requirement: "tabulate", met: true }] });
    expect(result.phases.map((phase) => phase.phase)).toEqual(["check"]);
    const piped = await albedo(["setup", "--venv", venv, "--with", "iniconfig"], env);
    expect(piped.stderr).toBe("");
    expect(piped.stdout).toMatch(/^albedo setup: already set up: .* iniconfig \S+, tabulate \S+; to use it, set ALBEDO_PYTHON=.*\n$/);

    // Piped (a log, npm's install script): a line as each phase starts and ends, and pip's steps under it.
    const more = await albedo(["setup", "--venv", venv, "--with", "termcolor"], env);
    expect(more.code).toBe(0);
    expect(more.stderr).toMatch(/^albedo setup: installing termcolor with pip \.\.\.\n(  pip: .*\n)*  pip: (Collecting|Processing|Using cached) .*termcolor.*\n(  pip: .*\n)*albedo setup: installing termcolor with pip \.\.\. done \(\d+\.\d s\)\nalbedo setup: verifying/);
    expect(more.stderr).toMatch(/  pip: Successfully installed termcolor-\S+\n/);

    // doctor lists what setup --with installed into the venv, though no settings file names it.
    const doctor = await albedo(["doctor", "--json"], cleanEnv({ ALBEDO_HOME: stateWith(temps.make(), {}), ALBEDO_PYTHON: join(venv, "bin", "python") }));
    const listed = (JSON.parse(doctor.stdout) as DoctorReport).checks.find((check) => check.name === "packages");
    expect(listed).toMatchObject({ status: "ok", detail: expect.stringMatching(/^termcolor \S+ \(setup --with\), tabulate \S+ \(setup --with\), iniconfig \S+ \(setup --with\)$/) });
  }, INSTALL_TEST_TIMEOUT_MS);

  it("refuses a --with that is not a plain requirement before running pip (exit 2), and a broken python.packages (exit 1)", async () => {
    const root = temps.make();
    const venv = join(root, "never-made");
    const env = cleanEnv({ PIP_RETRIES: "0", ALBEDO_HOME: stateWith(root, { python: { packages: ["numpy", "--index-url=http://evil/simple"] } }) });
    for (const bad of ["-r/etc/passwd", "numpy,https://evil.example/x.whl", "numpy,pandas;os_name=='nt'"]) {
      const refused = await albedo(["setup", "--venv", venv, "--with", bad], env);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr, bad).toMatch(/^albedo setup: --with: /);
    }
    const broken = await albedo(["setup", "--venv", venv], env);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^albedo setup: settings file .*settings\.json: python\.packages\[1\]: "--index-url=http:\/\/evil\/simple" is a pip option/);
    expect(existsSync(venv)).toBe(false);
  });

  it("says which package pip could not find, and exits 1", async () => {
    const root = temps.make();
    const { venv } = venvOverMain(root);
    const env = cleanEnv({ PIP_RETRIES: "0", ALBEDO_HOME: stateWith(root, {}) });
    const { code, stdout, stderr } = await albedo(["setup", "--venv", venv, "--with", "albedo-no-such-package-xyz"], env);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^albedo setup: installing albedo-no-such-package-xyz with pip \.\.\.\n(  pip: .*\n)*albedo setup: installing albedo-no-such-package-xyz with pip \.\.\. failed \(\d+\.\d s\)\nalbedo setup: pip could not download albedo-no-such-package-xyz: /m);
  }, INSTALL_TEST_TIMEOUT_MS);
});

describe("X D-4 albedo doctor lists the packages python.packages names", () => {
  async function packagesCheck(state: string) {
    const { stdout } = await albedo(["doctor", "--json"], cleanEnv({ ALBEDO_HOME: state, ALBEDO_PYTHON: MAIN_VENV_PYTHON }));
    return (JSON.parse(stdout) as DoctorReport).checks.find((check) => check.name === "packages");
  }

  it("each with its version, a warning naming the missing ones, and a warning for a settings file it cannot read", async () => {
    expect(await packagesCheck(stateWith(temps.make(), {}))).toEqual({ name: "packages", status: "ok", detail: "none named in python.packages (global settings) or added by albedo setup --with", fix: null });
    expect(await packagesCheck(stateWith(temps.make(), { python: { packages: ["six", "traitlets>=5"] } }))).toMatchObject({ status: "ok", detail: expect.stringMatching(/^six \S+, traitlets \S+$/) });
    const missing = await packagesCheck(stateWith(temps.make(), { python: { packages: ["six", "albedo-no-such-package-xyz", "traitlets>=99"] } }));
    expect(missing).toMatchObject({ status: "warn", detail: expect.stringMatching(/^six \S+, albedo-no-such-package-xyz not installed, traitlets>=99 wanted, \S+ installed$/) });
    expect(missing?.fix).toContain("albedo setup");
    const unreadable = await packagesCheck(stateWith(temps.make(), "{ not json"));
    expect(unreadable).toMatchObject({ status: "warn", detail: expect.stringMatching(/^python\.packages not read: settings file .*settings\.json: not valid JSON/) });
  });
});
