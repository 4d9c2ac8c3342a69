/** What a new user meets on a terminal (issue 29): each case through the real binary on a pseudo-terminal. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { testPython } from "../kernel/python.js";
import { bareVenv, cleanEnv, MAIN_VENV_PYTHON } from "../python/helpers.js";
import { runOnPty, type PtyStep } from "../support/pty.js";
import { tempDirs } from "../support/tempDirs.js";
import { TOPICS } from "../../src/cli/plumbing/help.js";
import { call, envFor, killDaemon, makeDirs, startDaemon } from "../daemon/support/daemon.js";
import { runAlbedo } from "../support/cli.js";
import { poll } from "../support/poll.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "albedo");
const temps = tempDirs("alb-new-");
afterEach(() => temps.cleanup());

/** A home, a state dir (0700), a workspace and an empty PATH directory: a machine without bubblewrap. */
function freshMachine(settings?: object) {
  const root = temps.make();
  const [home, state, workspace, bin] = ["home", "state", "ws", "bin"].map((name) => join(root, name)) as [string, string, string, string];
  for (const dir of [home, workspace, bin]) mkdirSync(dir);
  mkdirSync(state, { mode: 0o700 });
  if (settings !== undefined) writeFileSync(join(state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
  const env = cleanEnv({ HOME: home, ALBEDO_HOME: state, JUPYTER_DATA_DIR: join(root, "jupyter"), PATH: bin, ALBEDO_PYTHON: MAIN_VENV_PYTHON });
  return { root, home, state, workspace, env };
}

/** Runs `albedo ARGS` on a pseudo-terminal. */
function albedoOnPty(args: readonly string[], steps: readonly PtyStep[], env: NodeJS.ProcessEnv, cwd: string) {
  return runOnPty(testPython(), [process.execPath, BIN, ...args], steps, env, cwd);
}

/** Terminal text without colour and cursor codes, each line as the terminal leaves it. */
export function screen(transcript: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = transcript.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "");
  return plain.split("\n").map((line) => line.split("\r").filter((part) => part !== "").at(-1) ?? "").join("\n");
}

/** Doctor's table with each check on one line: wrapped continuation lines joined back. */
const doctorLines = (transcript: string): string => screen(transcript).replace(/\n {10,}/g, " ");

describe("X K-10 albedo doctor reads the sandbox setting", () => {
  it("without bubblewrap: under sandbox required the check fails (exit 1), under off it is ok and says why, under auto it warns naming the command", { timeout: 120_000 }, async () => {
    const required = freshMachine({ sandbox: "required" });
    const failed = await albedoOnPty(["doctor"], [{ expect: "albedo doctor: \\d+ failed" }], required.env, required.workspace);
    expect(doctorLines(failed.transcript)).toMatch(/^fail +bubblewrap +bubblewrap \(bwrap\) not found on PATH: no kernel can start \(setting sandbox: required\)/m);
    expect(failed.exit).toBe(1);
    const off = freshMachine({ sandbox: "off" });
    const quiet = await albedoOnPty(["doctor"], [{ expect: "albedo doctor: \\d+ failed" }], off.env, off.workspace);
    expect(doctorLines(quiet.transcript)).toMatch(/^ok +bubblewrap +not checked: the sandbox setting is off/m);
    expect(quiet.exit).toBe(0);
    const auto = freshMachine();
    const warned = await albedoOnPty(["doctor"], [{ expect: "albedo doctor: \\d+ failed" }], auto.env, auto.workspace);
    expect(doctorLines(warned.transcript)).toMatch(/^warn +bubblewrap +.*\(setting sandbox: auto\)/m);
    expect(doctorLines(warned.transcript)).toContain("`albedo settings set sandbox off`");
  });
});

describe.each([
  ["console", ">>> "],
  ["chat", "› "],
] as const)("X D-5 an attached %s whose daemon stops", (command, prompt) => {
  it("says in one line that the daemon stopped and what to run, and ends (exit 1), instead of failing every input", { timeout: 180_000 }, async () => {
    const dirs = await makeDirs();
    const daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    try {
      const env = { ...envFor(dirs), TERM: "xterm" };
      const attached = albedoOnPty([command], [
        { expect: prompt, timeout: 90 },
        { expect: "the daemon at \\S+ stopped", timeout: 90 },
      ], env, dirs.workspace);
      await poll(async () => ((await call(daemon, "GET", "/sessions")).body.sessions as unknown[]).length > 0, { what: `the ${command}'s session on the daemon`, timeoutMs: 90_000 });
      expect((await runAlbedo(["daemon", "stop"], { cwd: dirs.workspace, env })).code).toBe(0);
      const ran = await attached;
      expect(ran.failed, JSON.stringify(ran.transcript.slice(-1500))).toBeNull();
      const text = screen(ran.transcript);
      expect(text).toMatch(new RegExp(`^albedo ${command}: the daemon at http://127\\.0\\.0\\.1:\\d+ stopped \\(or closed this session\\), so the ${command} ends; run \`albedo ${command}\` again`, "m"));
      expect(text).not.toContain("ECONNREFUSED");
      expect(ran.exit).toBe(1);
    } finally {
      await killDaemon(daemon);
      await dirs.cleanup();
    }
  });
});

describe("X a Python without ipykernel", () => {
  it("albedo exec and the console (npm start) name what is missing and the fix", { timeout: 120_000 }, async () => {
    const machine = freshMachine();
    const bare = bareVenv(join(machine.root, "bare"));
    const ran = await albedoOnPty(["exec", "--sandbox", "off", "-c", "print(1)"], [{ expect: "fix: " }], { ...machine.env, ALBEDO_PYTHON: bare }, machine.workspace);
    const text = screen(ran.transcript);
    expect(text).toMatch(/cannot run a kernel: missing ipykernel/);
    expect(text).toMatch(/^fix: install the requirements into it \(`.*-m pip install 'ipykernel>=7' pyzmq`\), or unset ALBEDO_PYTHON/m);
    expect(ran.exit).toBe(1);
    const console = await albedoOnPty(["console", "--sandbox", "off"], [{ expect: "fix: " }], { ...machine.env, ALBEDO_PYTHON: bare }, machine.workspace);
    expect(screen(console.transcript)).toMatch(/^fix: install the requirements into it/m);
  });
});

describe("X K-10 S-4 messages a new user reads", () => {
  it("help for an unknown topic lists the topics; a settings file with a JSON error names its line and column", { timeout: 60_000 }, async () => {
    const machine = freshMachine();
    const help = await runAlbedo(["help", "nope"], { cwd: machine.workspace, env: machine.env });
    expect(help.stderr).toContain(`Topics: ${Object.keys(TOPICS).join(", ")}.`);
    writeFileSync(join(machine.state, "settings.json"), '{\n  "sandbox": "auto",\n}\n', { mode: 0o600 });
    const doctor = await runAlbedo(["doctor", "--json"], { cwd: machine.workspace, env: machine.env });
    expect(doctor.stdout).toMatch(/not valid JSON at line 3, column 1/);
  });

  it("no model configured names the real settings file; the no-bubblewrap warning names the command and stands on its own line", { timeout: 120_000 }, async () => {
    const machine = freshMachine();
    const chat = await runAlbedo(["chat", "--sandbox", "off", "hi"], { cwd: machine.workspace, env: machine.env });
    expect(chat.stdout + chat.stderr).toContain(`in the global settings file (${join(machine.state, "settings.json")})`);
    const exec = await albedoOnPty(["exec", "-c", "print(6 * 7)"], [{ expect: "42" }], machine.env, machine.workspace);
    const text = screen(exec.transcript);
    expect(text).toMatch(/^albedo warn: sandbox: bubblewrap not found; kernels run unsandboxed\. .*`albedo settings set sandbox off`/m);
  });

  it("settings get shows a global-only key's effective value and where it came from", { timeout: 120_000 }, async () => {
    const machine = freshMachine();
    try {
      const unset = await runAlbedo(["settings", "get", "sandbox"], { cwd: machine.workspace, env: machine.env });
      expect(unset.stdout).toContain('effective: sandbox = "auto" (the default; only the global settings may set it)');
      expect((await runAlbedo(["settings", "set", "sandbox", "off"], { cwd: machine.workspace, env: machine.env })).code).toBe(0);
      const set = await runAlbedo(["settings", "get", "sandbox"], { cwd: machine.workspace, env: machine.env });
      expect(set.stdout).toContain('effective: sandbox = "off" (from the global settings)');
    } finally {
      await runAlbedo(["daemon", "stop"], { cwd: machine.workspace, env: machine.env });
    }
  });
});
