/**
 * Images as people see them in a terminal (I-3): `albedo exec` and the console print a label per
 * image with the file it was kept in (state dir, by content hash, 0600), in the kernel's order;
 * bad images are labelled, never drawn; kitty and iTerm2 draw inline only on their own terminal.
 * Real binary, real (sandboxed) kernel, real files.
 */
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageStore, IMAGES_DIR, checkImage, pruneImages } from "../../src/images/index.js";
import { blackPng, picture } from "../images/fixtures.js";
import { testPython } from "../kernel/python.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { ALBEDO_BIN, runAlbedo, type CliRun } from "../support/cli.js";
import { runOnPty } from "../support/pty.js";
import { TINY_PNG_BASE64 } from "../mcpServer/support.js";

let dirs: SessionDirs;

beforeAll(async () => {
  dirs = await sessionDirs();
  const bomb = await blackPng(30_000, 30_000);
  const plot = await picture(640, 480);
  const files: Record<string, string> = {
    "tiny.b64": TINY_PNG_BASE64,
    "plot.b64": plot.toString("base64"),
    "badsig.b64": Buffer.concat([Buffer.from("NOTAPNG!"), plot.subarray(8)]).toString("base64"),
    "truncated.b64": plot.subarray(0, Math.floor(plot.length / 2)).toString("base64"),
    "bomb.b64": bomb.toString("base64"),
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dirs.workspace, name), text);
});

afterAll(() => dirs?.cleanup());

const env = () => ({ ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir });

function exec(code: string): Promise<CliRun> {
  return runAlbedo(["exec", "-c", code], { cwd: dirs.workspace, env: env() });
}

/** Python that shows the base64 in workspace file `name` as a raw `mime` display bundle. */
const show = (name: string, mime = "image/png") => `display({${JSON.stringify(mime)}: open(${JSON.stringify(name)}).read(), 'text/plain': '<stand-in>'}, raw=True)`;
const PRELUDE = "from IPython.display import display, HTML\n";

describe("I-3 albedo exec prints each image as a label with its file", () => {
  it("prints the label and the kept file's path in the kernel's order, the text/plain stand-in left out; the file holds the bytes, 0600, once per content", async () => {
    const run = await exec(`${PRELUDE}print('before')\n${show("plot.b64")}\nprint('between')\n${show("plot.b64")}\n${show("tiny.b64")}\nprint('after')`);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("before");
    expect(lines[1]).toMatch(/^\[image 1 · 640×480 PNG · [\d.]+ KB\] \/.+\/images\/[0-9a-f]{64}\.png$/);
    expect(lines[2]).toBe("between");
    expect(lines[3]).toMatch(/^\[image 2 · 640×480 PNG/);
    expect(lines[4]).toMatch(/^\[image 3 · 8×8 PNG · \d+ B\] /);
    expect(lines[5]).toBe("after");
    expect(run.stdout).not.toContain("<stand-in>");
    const path = lines[1]!.split("] ")[1]!;
    expect(path.startsWith(join(dirs.stateDir, IMAGES_DIR))).toBe(true);
    expect(readFileSync(path).toString("base64")).toBe(readFileSync(join(dirs.workspace, "plot.b64"), "utf8"));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dirs.stateDir, IMAGES_DIR)).mode & 0o777).toBe(0o700);
    expect(lines[3]!.split("] ")[1]).toBe(path);
    expect(readdirSync(join(dirs.stateDir, IMAGES_DIR)).filter((name) => name.endsWith(".png")).length).toBe(2);
    // Piped: nothing but text.
    expect(run.stdout).not.toMatch(/\x1b/);
  }, 120_000);

  it("labels a bad signature, a truncated PNG, a 30,000 × 30,000 bomb and an SVG as not shown, and shows 100 images of one cell", async () => {
    const svg = "display({'image/svg+xml': '<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>', 'text/plain': '<svg>'}, raw=True)";
    const run = await exec(`${PRELUDE}${show("badsig.b64")}\n${show("truncated.b64")}\n${show("bomb.b64")}\n${svg}\nfor _ in range(100):\n    ${show("tiny.b64")}`);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^\[image 1 · not shown: .*(magic|signature|PNG)/i);
    expect(lines[1]).toMatch(/^\[image 2 · not shown: /);
    expect(lines[2]).toMatch(/^\[image 3 · not shown: .*30000×30000|^\[image 3 · not shown: .*MAX_IMAGE_PIXELS/);
    expect(lines[3]).toBe("[image 4 · SVG · not shown: an SVG is a document, not pixels; a notebook renders it]");
    expect(lines.slice(4)).toHaveLength(100);
    expect(lines[103]).toMatch(/^\[image 104 · 8×8 PNG/);
  }, 120_000);

  it("prints an HTML output's text/plain part with a hint where it renders", async () => {
    const run = await exec(`${PRELUDE}display(HTML('<b>bold</b>'))`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("<IPython.core.display.HTML object>");
    expect(run.stderr).toContain("(an HTML output, shown above as text; a Jupyter notebook on the albedo kernel renders it)");
  }, 120_000);
});

describe("I-3 the console and a real plot", () => {
  it("the console prints the same label for an image shown in a cell", async () => {
    const run = await runAlbedo(["console"], { cwd: dirs.workspace, env: env(), stdin: `${PRELUDE}${show("tiny.b64")}\nprint('after')\n` });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\[image 1 · 8×8 PNG · 75 B\] \/\S+\/images\/[0-9a-f]{64}\.png\nafter/);
  }, 120_000);

  it.skipIf(!HAVE_TEST_VENV)("a matplotlib figure drawn in the sandboxed kernel is labelled with its size", async () => {
    const own = await sessionDirs();
    try {
      await writeFile(join(own.stateDir, "settings.json"), JSON.stringify({ kernel: { python: TEST_VENV_PYTHON } }), { mode: 0o600 });
      const run = await runAlbedo(["exec", "-c", "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()\nprint('drawn')"], { cwd: own.workspace, env: { ...process.env, HOME: own.home, ALBEDO_HOME: own.stateDir } });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^\[image 1 · \d{3}×\d{3} PNG · [\d.]+ KB\] \S+\.png\ndrawn\n$/);
    } finally {
      await own.cleanup();
    }
  }, 120_000);
});

describe("I-3 images inline on terminals that draw them", () => {
  const onPty = (extra: NodeJS.ProcessEnv) =>
    runOnPty(testPython(), [process.execPath, ALBEDO_BIN, "exec", "-c", `${PRELUDE}${show("tiny.b64")}\nprint('done')`], [{ expect: "done", timeout: 90 }], { ...env(), ...extra }, dirs.workspace);

  it("iTerm2 (TERM_PROGRAM=iTerm.app) gets its inline-image escape after the label", async () => {
    const run = await onPty({ TERM_PROGRAM: "iTerm.app" });
    expect(run.failed).toBeNull();
    expect(run.transcript).toMatch(/\[image 1 · 8×8 PNG[^\n]*\r?\n\x1b\]1337;File=inline=1;size=\d+;preserveAspectRatio=1:iVBOR/);
  }, 120_000);

  it("kitty (KITTY_WINDOW_ID) gets its graphics escape; a terminal that says neither, or ALBEDO_INLINE_IMAGES=0, gets the label alone", async () => {
    const kitty = await onPty({ KITTY_WINDOW_ID: "1" });
    expect(kitty.transcript).toContain("\x1b_Ga=T,f=100,m=0;iVBOR");
    const plain = await onPty({ TERM_PROGRAM: "", KITTY_WINDOW_ID: "", LC_TERMINAL: "" });
    expect(plain.transcript).toMatch(/\[image 1 · 8×8 PNG/);
    expect(plain.transcript).not.toMatch(/\x1b\]1337|\x1b_G/);
    const off = await onPty({ TERM_PROGRAM: "iTerm.app", ALBEDO_INLINE_IMAGES: "0" });
    expect(off.transcript).not.toContain("\x1b]1337");
  }, 200_000);
});

describe("I-3 the image store", () => {
  it("keeps each content once, refuses past its quota with a note, finds only ids it kept and never a path; prune removes files past the retention", async () => {
    const local = await sessionDirs();
    try {
      const first = await checkImage("image/png", await picture(50, 40));
      const second = await checkImage("image/png", await picture(60, 40));
      if (!first.ok || !second.ok) throw new Error("fixtures did not check");
      const store = new ImageStore(local.stateDir, { quotaBytes: first.image.bytes.length + 10 });
      const kept = await store.keep(first.image);
      expect(kept.ok).toBe(true);
      expect((await store.keep(first.image)).ok).toBe(true);
      expect(store.usedBytes).toBe(first.image.bytes.length);
      const over = await store.keep(second.image);
      expect(over).toEqual({ ok: false, note: expect.stringMatching(/MAX_SESSION_IMAGE_BYTES/) });
      expect(store.find(first.image.sha256)?.width).toBe(50);
      expect(store.find(second.image.sha256)).toBeUndefined();
      for (const id of ["../settings.json", `${first.image.sha256}/../x`, first.image.sha256.toUpperCase(), ""]) expect(store.find(id)).toBeUndefined();
      // Another session's store does not know this one's images.
      expect(new ImageStore(local.stateDir).find(first.image.sha256)).toBeUndefined();
      expect(await pruneImages(local.stateDir, 60_000)).toBe(0);
      expect(await pruneImages(local.stateDir, 60_000, Date.now() + 120_000)).toBe(1);
      expect(readdirSync(join(local.stateDir, IMAGES_DIR))).toEqual([]);
      // A store with a retention applies it before its first write: a stale file goes, the new one stays.
      const stale = join(local.stateDir, IMAGES_DIR, `${"0".repeat(64)}.png`);
      writeFileSync(stale, "old");
      utimesSync(stale, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
      await new ImageStore(local.stateDir, { retentionMs: 60_000 }).keep(second.image);
      expect(readdirSync(join(local.stateDir, IMAGES_DIR))).toEqual([`${second.image.sha256}.png`]);
    } finally {
      await local.cleanup();
    }
  });
});
