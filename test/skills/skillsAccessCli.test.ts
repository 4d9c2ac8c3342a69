import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/plumbing/command.js";
import { runCli } from "../../src/cli/main.js";
import { closeNames } from "../../src/text/index.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

interface Captured {
  readonly io: CliIO;
  stdout(): Buffer;
  stderr(): string;
}

/** A stream that keeps every chunk synchronously, so output is complete when the command returns. */
function collector(chunks: Buffer[]): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
}

function capture(cwd: string, home: string): Captured {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdout = collector(out);
  const stderr = collector(err);
  return {
    io: { stdout, stderr, stdin: new PassThrough(), env: { HOME: home }, cwd },
    stdout: () => Buffer.concat(out),
    stderr: () => Buffer.concat(err).toString("utf8"),
  };
}

/** A workspace with skill "access-demo" holding a text file, a multi-page file and a binary file. */
function workspace() {
  const base = temps.make("albedo-access-cli-");
  const dirs = layout(base);
  const dir = writeSkill(roots.wsAlbedo(dirs.workspace), "access-demo");
  writeFile(join(dir, "references", "notes.md"), "héllo notes\n");
  writeFile(join(dir, "assets", "blob.bin"), Buffer.from([0xff, 0x00, 0xfe, 0x01]));
  return { ...dirs, dir };
}

describe("X skills resources", () => {
  it("prints one path per line, and JSON with resources and diagnostics under --json", async () => {
    const ws = workspace();
    const text = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "resources", "access-demo"], text.io)).toBe(0);
    expect(text.stdout().toString()).toBe("SKILL.md\nassets/blob.bin\nreferences/notes.md\n");
    const json = capture("/", ws.home);
    expect(await runCli(["skills", "resources", "access-demo", "--workspace", ws.workspace, "--json"], json.io)).toBe(0);
    expect(JSON.parse(json.stdout().toString())).toEqual({ resources: ["SKILL.md", "assets/blob.bin", "references/notes.md"], diagnostics: [] });
  });

  it("exits 1 naming close skills for an unknown name", async () => {
    const ws = workspace();
    const run = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "resources", "acess-demo"], run.io)).toBe(1);
    expect(run.stderr()).toContain('no skill named "acess-demo"');
    expect(run.stderr()).toContain("did you mean access-demo");
  });
});

describe("X skills read", () => {
  it("prints the page's bytes, with a stderr note giving the next offset when truncated", async () => {
    const ws = workspace();
    const whole = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "read", "access-demo", "references/notes.md"], whole.io)).toBe(0);
    expect(whole.stdout().toString()).toBe("héllo notes\n");
    expect(whole.stderr()).toBe("");
    const part = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "read", "access-demo", "references/notes.md", "--limit", "2"], part.io)).toBe(0);
    expect(part.stdout().toString()).toBe("h");
    expect(part.stderr()).toContain("--offset 1");
  });

  it("writes base64 pages as raw bytes, and the ReadResult under --json", async () => {
    const ws = workspace();
    const raw = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "read", "access-demo", "assets/blob.bin"], raw.io)).toBe(0);
    expect(raw.stdout()).toEqual(Buffer.from([0xff, 0x00, 0xfe, 0x01]));
    const json = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "read", "access-demo", "assets/blob.bin", "--offset", "1", "--limit", "2", "--json"], json.io)).toBe(0);
    expect(JSON.parse(json.stdout().toString())).toEqual({
      content: Buffer.from([0x00, 0xfe]).toString("base64"),
      encoding: "base64",
      size: 4,
      offset: 1,
      next_offset: 3,
      truncated: true,
    });
  });

  it("reads SKILL.md when no resource is given", async () => {
    const ws = workspace();
    const run = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "read", "access-demo", "--json"], run.io)).toBe(0);
    expect(JSON.parse(run.stdout().toString()).content).toContain("name: access-demo");
  });

  it("exits 2 with usage for bad --offset or --limit", async () => {
    const ws = workspace();
    for (const bad of [["--offset", "-3"], ["--offset", "x"], ["--limit", "0"], ["--limit", "65537"], ["--offset", "99999999999999999999"]]) {
      const run = capture(ws.workspace, ws.home);
      expect(await runCli(["skills", "read", "access-demo", ...bad], run.io)).toBe(2);
      expect(run.stderr()).toContain("usage: albedo skills read");
    }
  });

  it("exits 1 with the wire error's message for a refused path or a missing resource", async () => {
    const ws = workspace();
    const climb = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "read", "access-demo", "../x"], climb.io)).toBe(1);
    expect(climb.stderr()).toContain('".."');
    const missing = capture(ws.workspace, ws.home);
    expect(await runCli(["skills", "read", "access-demo", "nope.md"], missing.io)).toBe(1);
    expect(missing.stderr()).toContain("does not exist");
  });

  it("has generated --help", async () => {
    const run = capture("/", "/nonexistent-home");
    expect(await runCli(["skills", "read", "--help"], run.io)).toBe(0);
    expect(run.stdout().toString()).toContain("usage: albedo skills read NAME [RESOURCE]");
    expect(run.stdout().toString()).toContain("--limit N");
  });
});

describe("closeNames", () => {
  it("offers names within two edits or containing the input, closest first", () => {
    expect(closeNames("pdf", ["pdf-processing", "docx", "pdq"])).toEqual(["pdf-processing", "pdq"]);
    expect(closeNames("zzz", ["pdf-processing"])).toEqual([]);
  });
});
