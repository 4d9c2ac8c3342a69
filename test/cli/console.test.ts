/** The console as a person at a terminal meets it: through a pseudo-terminal (80 columns unless a test widens it), the real binary, a real kernel. */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPython } from "../kernel/python.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { runAlbedo } from "../support/cli.js";
import { runOnPty, type PtyStep } from "../support/pty.js";
import { INTERRUPT_NOTICE_MS } from "../../src/cli/terminal/interrupt.js";
import { roots, writeSkill } from "../support/skills.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "albedo");
/** What the terminal shows once the console waits for input. */
const PROMPT = ">>> ";
/** A description longer than 80 columns leave for it in the /skills table, shorter than 160 do. */
const WIDE_DESCRIPTION = "Turns a folder of meeting notes into one summary with decisions, owners and due dates.";

let dirs: SessionDirs;

beforeAll(async () => {
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo", { body: "# Demo\n\nTidy up.\n" });
  writeSkill(roots.wsAgents(dirs.workspace), "minutes", { description: WIDE_DESCRIPTION });
  const broken = join(dirs.workspace, ".agents", "skills", "broken");
  await mkdir(broken, { recursive: true });
  await writeFile(join(broken, "SKILL.md"), "---\nname: broken\ndescription: Use this: badly\n---\n");
});

afterAll(() => dirs?.cleanup());

function consoleOnPty(steps: readonly PtyStep[], env: NodeJS.ProcessEnv = {}, columns = 80) {
  const all = { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, ...env };
  return runOnPty(testPython(), [process.execPath, BIN, "console", "--sandbox", "off"], steps, all, dirs.workspace, columns);
}

/** Terminal text without colour and cursor codes, each line as the terminal leaves it (what follows a carriage return overwrites it). */
function screen(transcript: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = transcript.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "");
  return plain.split("\n").map((line) => line.split("\r").filter((part) => part !== "").at(-1) ?? "").join("\n");
}

describe("X albedo console on a terminal", () => {
  it("built-ins print readable text within 80 columns; Tab completes arguments; obj? and activations read well", { timeout: 180_000 }, async () => {
    const ran = await consoleOnPty([
      { expect: PROMPT, timeout: 60 },
      { send: "/reload s" },
      { expect: "/reload s", new: true },
      { send: "\t" },
      // readline writes only what completion added.
      { expect: "ession", new: true },
      { send: "\r" },
      { expect: "reloaded: ", new: true },
      { send: "/help\r" },
      { expect: "Tab completes", new: true },
      { send: "/status\r" },
      { expect: "extensions", new: true },
      { send: "/skills\r" },
      { expect: "activates one", new: true },
      { send: "commands.demo?\r" },
      { expect: "Docstring", new: true },
      { send: "await commands.demo('go')\r" },
      { expect: "Tidy up\\.\r\n.*>>> ", new: true },
      { send: "\u0004" },
    ]);
    expect(ran.failed).toBeNull();
    expect(ran.exit).toBe(0);
    const text = screen(ran.transcript);
    expect(text).toMatch(/^albedo console · session [0-9a-f]+ \(embedded\)\n\d+ skills, 1 with errors \(see \/skills\) · \/help lists commands · Ctrl-D quits\nnetwork: unenforced \(the kernel runs unsandboxed, with that host.s network\)\n/m);
    expect(text).toMatch(/reloaded: no change, \d+ skills\n/);
    expect(text).toMatch(/\n {2}\/reload \[target\] +Re-run skill discovery/);
    expect(text).toMatch(/\nkernel +[a-z]+ \(pid \d+\)\n/);
    expect(text).toMatch(/\ncatalog +\d+ skills, revision [0-9a-f]{12}\n/);
    expect(text).toMatch(/\nNAME +SCOPE +DESCRIPTION\n/);
    expect(text).toContain("Signature: commands.demo(arguments=None)");
    expect(text).toMatch(/skill demo {2}\(.*demo\/SKILL\.md\)\narguments: go\n\n# Demo\n\nTidy up\./);
    for (const line of text.split("\n")) expect(line.length, line).toBeLessThanOrEqual(80);
    // Ctrl-D leaves the shell's prompt on a fresh line.
    expect(ran.transcript).toMatch(/>>> (\u001b\[\d*G)?\r\n$/);
  });

  it("a wider terminal gets wider tables: /skills shows a long description whole at 160 columns and cut at 80", { timeout: 180_000 }, async () => {
    const steps = (marker: string): PtyStep[] => [
      { expect: PROMPT, timeout: 60 },
      { send: "/skills\r" },
      { expect: "activates one", new: true },
      { send: `print("${marker}")\r` },
      { expect: `\n${marker}`, new: true },
      { send: "\u0004" },
    ];
    const wide = await consoleOnPty(steps("wide-done"), {}, 160);
    expect(wide.failed).toBeNull();
    const wideText = screen(wide.transcript);
    expect(wideText).toContain(WIDE_DESCRIPTION);
    const wideLines = wideText.split("\n");
    expect(Math.max(...wideLines.map((line) => line.length))).toBeGreaterThan(80);
    for (const line of wideLines) expect(line.length, line).toBeLessThanOrEqual(160);
    const narrow = await consoleOnPty(steps("narrow-done"), {}, 80);
    expect(narrow.failed).toBeNull();
    const narrowText = screen(narrow.transcript);
    expect(narrowText).not.toContain(WIDE_DESCRIPTION);
    expect(narrowText).toMatch(/minutes +\S+ +Turns a folder of meeting notes.*…\n/);
    // `albedo skills list` lays its table out for the terminal too; piped, it keeps 80 columns.
    const all = { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir };
    const listed = await runOnPty(testPython(), [process.execPath, BIN, "skills", "list"], [{ expect: "revision [0-9a-f]{12}", timeout: 60 }], all, dirs.workspace, 160);
    expect(listed.failed).toBeNull();
    expect(screen(listed.transcript)).toContain(WIDE_DESCRIPTION);
    const piped = await runAlbedo(["skills", "list"], { cwd: dirs.workspace, env: all });
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toContain(WIDE_DESCRIPTION);
    for (const line of piped.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it("`albedo` with no command opens the console on a terminal, and prints the overview when piped", { timeout: 120_000 }, async () => {
    const all = { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir };
    const bare = await runOnPty(testPython(), [process.execPath, BIN], [{ expect: PROMPT, timeout: 60 }, { send: "\u0004" }], all, dirs.workspace);
    expect(bare.failed).toBeNull();
    expect(screen(bare.transcript)).toMatch(/^albedo console · session /m);
    const piped = await runAlbedo([], { cwd: dirs.workspace, env: all });
    expect(piped).toMatchObject({ code: 0, stdout: expect.stringMatching(/^usage: albedo <command> \[options\]\n/) });
  });

  it("with its input closed (as .ci/run runs `npm start`), opens a session on the embedded default, reads end of input and exits 0", { timeout: 120_000 }, async () => {
    const all = { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir };
    const closed = await runAlbedo(["console", "--sandbox", "off"], { cwd: dirs.workspace, env: all });
    expect(closed.code, closed.stderr).toBe(0);
    expect(closed.stdout).toMatch(/^albedo console · session [0-9a-f]+ \(embedded\)\n/);
  });

  it("Ctrl-C interrupts a running cell; one that swallowed it is reported as still running, and the next Ctrl-C interrupts again", { timeout: 180_000 }, async () => {
    // One line for the console: the cell catches the first KeyboardInterrupt and sleeps on. The words
    // it prints are split in the source, so the terminal's echo of the line cannot match them.
    const cell = String.raw`exec("import time\ntry:\n  print('start' + 'ed', flush=True); time.sleep(100)\nexcept KeyboardInterrupt:\n  print('swal' + 'lowed', flush=True); time.sleep(100)")`;
    const ran = await consoleOnPty([
      { expect: PROMPT, timeout: 60 },
      { send: `${cell}\r` },
      { expect: "started", new: true },
      { send: "\u0003" },
      { expect: "swallowed", new: true },
      { expect: `albedo console: the cell is still running ${INTERRUPT_NOTICE_MS / 1000} s after the interrupt; press Ctrl-C to interrupt it again`, new: true, timeout: 30 },
      { send: "\u0003" },
      { expect: "KeyboardInterrupt", new: true },
      { expect: PROMPT, new: true },
      { send: "print('still', 6 * 7)\r" },
      { expect: "still 42", new: true },
      { send: "\u0004" },
    ]);
    expect(ran.failed, JSON.stringify(ran.transcript.slice(-1500))).toBeNull();
    expect(ran.exit).toBe(0);
    expect(ran.transcript).not.toContain("could not interrupt");
  });

  it("Ctrl-C at the prompt drops the typed line; two Tabs in one read complete, never inserting a Tab", { timeout: 180_000 }, async () => {
    const ran = await consoleOnPty([
      { expect: PROMPT, timeout: 60 },
      { send: "zz = 5" },
      { expect: "zz = 5", new: true },
      { send: "\u0003" },
      { expect: "\\^C", new: true },
      { send: "\r" },
      { expect: PROMPT, new: true },
      // The words are split so that the echo of the line cannot match them.
      { send: "print('z' + 'z' in globals(), 'ch' + 'eck')\r" },
      { expect: "(True|False) check\r\n.*>>> ", new: true },
      { send: "/reload s" },
      { expect: "/reload s", new: true },
      // A fast double tap reaches the console as one read.
      { send: "\t\t" },
      { expect: "ession", new: true },
      { send: "\r" },
      { expect: "reloaded: ", new: true },
      { send: "\u0004" },
    ]);
    expect(ran.failed, JSON.stringify(ran.transcript.slice(-1500))).toBeNull();
    expect(screen(ran.transcript)).toContain("False check");
    expect(ran.transcript).not.toContain("\u2409");
    expect(ran.exit).toBe(0);
  });

  it("keeps input history in the state dir across runs; a slow close says so", { timeout: 180_000 }, async () => {
    const first = await consoleOnPty([
      { expect: PROMPT, timeout: 60 },
      { send: "remembered = 6 * 7\r" },
      { expect: PROMPT, new: true },
      // A kernel that takes seconds to exit: the console says it is closing instead of looking hung.
      { send: "import atexit, time; _ = atexit.register(time.sleep, 2)\r" },
      { expect: PROMPT, new: true },
      { send: "\u0004" },
      { expect: "closing session…", timeout: 30 },
    ]);
    expect(first.failed).toBeNull();
    expect(first.exit).toBe(0);
    const history = join(dirs.stateDir, "console_history");
    expect(existsSync(history)).toBe(true);
    expect(readFileSync(history, "utf8")).toContain("remembered = 6 * 7\n");
    const second = await consoleOnPty([
      { expect: PROMPT, timeout: 60 },
      // Up twice: the atexit line, then the one before it.
      { send: "\u001b[A" },
      { expect: "atexit", new: true },
      { send: "\u001b[A" },
      { expect: "remembered = 6", new: true },
      { send: "\r" },
      { expect: PROMPT, new: true },
      { send: "print(remembered)\r" },
      { expect: "42", new: true },
      { send: "\u0004" },
    ]);
    expect(second.failed).toBeNull();
  });
});
