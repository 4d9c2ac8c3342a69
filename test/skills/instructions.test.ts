import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_INSTRUCTION_BYTES } from "../../src/skills/limits.js";
import { renderInstructions } from "../../src/skills/prompt.js";
import { discoverCatalog } from "../../src/skills/snapshot.js";
import { layout, writeFile } from "./fixtures.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

describe("S-11 instruction files", () => {
  it("reads <home>/.albedo/AGENTS.md then <workspace>/AGENTS.md, through links", async () => {
    const t = layout(temps.make());
    writeFile(join(t.home, "dotfiles", "agents.md"), "User orders.\n");
    mkdirSync(join(t.home, ".albedo"), { recursive: true });
    symlinkSync("../dotfiles/agents.md", join(t.home, ".albedo", "AGENTS.md"));
    writeFile(join(t.workspace, "AGENTS.md"), "\uFEFFWorkspace orders.");
    const snapshot = await discoverCatalog(t);
    expect(snapshot.instructions.map((f) => [f.scope, f.path, f.resolvedPath, f.text, f.truncated])).toEqual([
      ["user", join(t.home, ".albedo", "AGENTS.md"), join(t.home, "dotfiles", "agents.md"), "User orders.\n", false],
      ["workspace", join(t.workspace, "AGENTS.md"), join(t.workspace, "AGENTS.md"), "Workspace orders.", false],
    ]);
    expect(snapshot.diagnostics).toEqual([]);
    expect(renderInstructions(snapshot)).toBe(
      `<instructions scope="user" path="${join(t.home, ".albedo", "AGENTS.md")}">\nUser orders.\n</instructions>\n` +
        `<instructions scope="workspace" path="${join(t.workspace, "AGENTS.md")}">\nWorkspace orders.\n</instructions>\n`,
    );
  });

  it("absent files give no entries, no diagnostics and an empty block", async () => {
    const snapshot = await discoverCatalog(layout(temps.make()));
    expect(snapshot.instructions).toEqual([]);
    expect(renderInstructions(snapshot)).toBe("");
  });

  it("bounds each file to MAX_INSTRUCTION_BYTES with a truncated flag and a diagnostic, never splitting a character", async () => {
    const t = layout(temps.make());
    const text = "é".repeat(MAX_INSTRUCTION_BYTES);
    writeFile(join(t.workspace, "AGENTS.md"), text);
    const snapshot = await discoverCatalog(t);
    const file = snapshot.instructions[0]!;
    expect(file.truncated).toBe(true);
    expect(file.size).toBe(Buffer.byteLength(text));
    expect(Buffer.byteLength(file.text)).toBe(MAX_INSTRUCTION_BYTES);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["instructions_truncated"]);
    expect(renderInstructions(snapshot)).toContain('truncated="true"');
  });

  it("a FIFO, a directory or a broken link is refused without blocking", async () => {
    const t = layout(temps.make());
    execFileSync("mkfifo", [join(t.workspace, "AGENTS.md")]);
    mkdirSync(join(t.home, ".albedo", "AGENTS.md"), { recursive: true });
    let snapshot = await discoverCatalog(t);
    expect(snapshot.instructions).toEqual([]);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["not_regular_file", "not_regular_file"]);
    const u = layout(temps.make());
    symlinkSync(join(u.workspace, "nope.md"), join(u.workspace, "AGENTS.md"));
    snapshot = await discoverCatalog(u);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["broken_link"]);
  });

  it("invalid UTF-8 is a diagnostic", async () => {
    const t = layout(temps.make());
    writeFile(join(t.workspace, "AGENTS.md"), Buffer.from([0x41, 0xff, 0x41]));
    const snapshot = await discoverCatalog(t);
    expect(snapshot.instructions).toEqual([]);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["invalid_utf8"]);
  });

  it("the revision changes with instruction text", async () => {
    const t = layout(temps.make());
    writeFile(join(t.workspace, "AGENTS.md"), "one");
    const before = (await discoverCatalog(t)).revision;
    writeFile(join(t.workspace, "AGENTS.md"), "two");
    expect((await discoverCatalog(t)).revision).not.toBe(before);
  });
});
