import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";

const repo = join(import.meta.dirname, "..", "..");
const bin = join(repo, "bin", "albedo");
/** Liveness bound for one CLI process in this file. */
const PROCESS_TIMEOUT_MS = 90_000;

/** What the adversarial probe planted: set the window title (OSC, ended by BEL), then clear the screen (CSI). */
const ESCAPES = "\x1b]0;pwned\x07\x1b[2J";
/** The same as it must appear on a terminal. */
const SHOWN = "␛]0;pwned␇␛[2J";
/** Controls a terminal acts on: C0 but tab and newline, DEL, C1 (U+009B is a one-character CSI), and the bidirectional ones that reorder what it shows. */
// eslint-disable-next-line no-control-regex
const ACTIVE_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** A description that reads differently than it is stored: a right-to-left override, an isolate and a mark (YAML escapes). */
const BIDI_DESCRIPTION = String.raw`"Safe \u202Eexe.txt\u202C and \u2066x\u2069 \u200F\u061C done."`;
/** It as a terminal must show it. */
const BIDI_SHOWN = String.raw`Safe \u202eexe.txt\u202c and \u2066x\u2069 \u200f\u061c done.`;

let dirs: SessionDirs;
/** A home whose own path holds the escapes, so every installed path shown (source, location) carries them. */
let home: string;
let hostileDir: string;

beforeAll(async () => {
  dirs = await sessionDirs();
  home = join(dirs.root, `home${ESCAPES}`);
  const evil = join(home, ".agents", "skills", "evil");
  await mkdir(evil, { recursive: true });
  // YAML double-quoted escapes: ESC, BEL, a C1 CSI (U+009B) and DEL reach the description as characters.
  const description = String.raw`"Evil \x1b]0;pwned\x07 then \x1b[2J, a C1 CSI \x9b2J and a DEL \x7f."`;
  await writeFile(join(evil, "SKILL.md"), `---\nname: evil\ndescription: ${description}\n---\nDo evil.\n`);
  const bidi = join(home, ".agents", "skills", "bidi");
  await mkdir(bidi, { recursive: true });
  await writeFile(join(bidi, "SKILL.md"), `---\nname: bidi\ndescription: ${BIDI_DESCRIPTION}\n---\nBody.\n`);
  hostileDir = join(dirs.workspace, ".albedo", "skills", `x${ESCAPES}`);
  await mkdir(hostileDir, { recursive: true });
  await writeFile(join(hostileDir, "SKILL.md"), `---\nname: x\ndescription: "A dir named with \\x1b[2J."\n---\nBody.\n`);
  const kernelspec = join(dirs.root, "jupyter", "kernels", `k${ESCAPES}`);
  await mkdir(kernelspec, { recursive: true });
  await writeFile(join(kernelspec, "kernel.json"), "{}");
});

afterAll(() => dirs?.cleanup());

interface Ran {
  readonly code: number | null;
  /** stdout and stderr, decoded. */
  readonly text: string;
}

function albedo(args: string[], stdin = ""): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: dirs.workspace,
      env: { ...process.env, HOME: home, ALBEDO_HOME: dirs.stateDir, JUPYTER_DATA_DIR: join(dirs.root, "jupyter") },
      timeout: PROCESS_TIMEOUT_MS,
    });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, text: Buffer.concat(chunks).toString("utf8") }));
    child.stdin.end(stdin);
  });
}

/** Asserts the output acts on no terminal and shows the planted escapes visibly. */
function expectNeutralised(ran: Ran, shown = SHOWN): void {
  expect(ran.text).not.toMatch(ACTIVE_CONTROL);
  expect(ran.text).toContain(shown);
}

describe("X B terminal output shows control characters from skills, directory names and kernelspecs, never sends them", () => {
  it("skills prompt and skills list --json: bidirectional controls in a description are shown as escapes", async () => {
    const prompt = await albedo(["skills", "prompt"]);
    expect(prompt.code).toBe(0);
    expectNeutralised(prompt, BIDI_SHOWN);
    const listed = await albedo(["skills", "list", "--json"]);
    expect(listed.text).not.toMatch(ACTIVE_CONTROL);
    const skills = (JSON.parse(listed.text) as { skills: { name: string; description: string }[] }).skills;
    expect(skills.find((skill) => skill.name === "bidi")?.description).toBe("Safe \u202eexe.txt\u202c and \u2066x\u2069 \u200f\u061c done.");
  });

  it("skills list: the description in the table and the hostile directory in the diagnostics", async () => {
    const ran = await albedo(["skills", "list"]);
    expect(ran.code).toBe(0);
    expectNeutralised(ran);
    expect(ran.text).toContain("Evil ␛]0;pwned␇ then ␛[2J");
    expect(ran.text).toContain(`x${SHOWN}`);
    expect(ran.text).toContain(String.raw`Safe \u202eexe.txt`);
  });

  it("skills list --json escapes every control and still parses back to the exact description", async () => {
    const ran = await albedo(["skills", "list", "--json"]);
    expect(ran.code).toBe(0);
    expect(ran.text).not.toMatch(ACTIVE_CONTROL);
    const listed = JSON.parse(ran.text) as { skills: { name: string; description: string }[]; diagnostics: { path: string }[] };
    expect(listed.skills.find((skill) => skill.name === "evil")?.description).toBe("Evil \x1b]0;pwned\x07 then \x1b[2J, a C1 CSI \u009b2J and a DEL \u007f.");
    expect(listed.diagnostics.some((d) => d.path.startsWith(hostileDir))).toBe(true);
  });

  it("skills prompt: the block a model receives carries no control characters", async () => {
    const ran = await albedo(["skills", "prompt"]);
    expect(ran.code).toBe(0);
    expectNeutralised(ran);
    // The whole description: the table of `skills list` cuts it to fit 80 columns.
    expect(ran.text).toContain("\\u009b2J");
    expect(ran.text).toContain("␡");
    expect(ran.text).toContain(`<location>${join(dirs.root, `home${SHOWN}`, ".agents", "skills", "evil", "SKILL.md")}</location>`);
  });

  it("skills validate names the hostile directory visibly", async () => {
    const ran = await albedo(["skills", "validate", hostileDir]);
    expect(ran.code).toBe(1);
    expectNeutralised(ran);
  });

  it("console: /help, /skills and a skill's activation text", { timeout: 120_000 }, async () => {
    const ran = await albedo(["console"], "/help\n/skills\n/evil go\n");
    expect(ran.code).toBe(0);
    expectNeutralised(ran);
    expect(ran.text).toContain("activated skill evil");
  });

  it("doctor: a kernelspec directory named with escapes", { timeout: 120_000 }, async () => {
    expectNeutralised(await albedo(["doctor"]), `k${SHOWN}`);
  });
});
