import { renameSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors/index.js";
import { discoverCatalog, findSkill, type SkillEntry } from "../../src/skills/index.js";
import { readResource, settledSkillFiles } from "../../src/skills/read.js";
import { UNSETTLED_FILE_MS } from "../../src/skills/limits.js";
import { SettledFiles } from "../../src/skills/settledFiles.js";
import { layout } from "./fixtures.js";
import { roots, skillText, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

/** A clock far enough ahead that every file on disk has settled. */
const later = () => Date.now() + 10 * UNSETTLED_FILE_MS;

function file(text: string): string {
  const path = join(temps.make("albedo-settled-"), "SKILL.md");
  writeFileSync(path, text);
  return path;
}

const stats = (path: string) => statSync(path, { bigint: true });

describe("R-2 settled SKILL.md bytes kept in memory", () => {
  it("keeps a settled file and serves it while its stamp is unchanged", () => {
    const files = new SettledFiles({ now: later });
    const path = file("one");
    files.keep(path, stats(path), Buffer.from("one"));
    expect(files.get(path, stats(path))?.toString()).toBe("one");
    expect(files.hits).toBe(1);
  });

  it("does not keep a file written less than UNSETTLED_FILE_MS ago: two quick writes can share a stamp", () => {
    const files = new SettledFiles();
    const path = file("one");
    files.keep(path, stats(path), Buffer.from("one"));
    expect(files.size).toBe(0);
    expect(files.get(path, stats(path))).toBeUndefined();
  });

  it("drops the kept bytes when the file is edited in place, even to the same size and mtime", () => {
    const files = new SettledFiles({ now: later });
    const path = file("one");
    const before = stats(path);
    files.keep(path, before, Buffer.from("one"));
    writeFileSync(path, "two");
    // Put mtime back: only ctime, which no user can set, still tells the edit apart.
    utimesSync(path, before.atime, before.mtime);
    expect(files.get(path, stats(path))).toBeUndefined();
    expect(files.size).toBe(0);
  });

  it("drops the kept bytes when another file is renamed over the path", () => {
    const files = new SettledFiles({ now: later });
    const path = file("one");
    files.keep(path, stats(path), Buffer.from("one"));
    writeFileSync(`${path}.new`, "one");
    renameSync(`${path}.new`, path);
    expect(files.get(path, stats(path))).toBeUndefined();
  });

  it("never keeps bytes that do not match the stamp's size", () => {
    const files = new SettledFiles({ now: later });
    const path = file("one");
    files.keep(path, stats(path), Buffer.from("on"));
    expect(files.size).toBe(0);
  });

  it("says a file would be kept only once settled and within the byte bound", () => {
    const path = file("12345");
    expect(new SettledFiles().wouldKeep(stats(path))).toBe(false);
    expect(new SettledFiles({ now: later }).wouldKeep(stats(path))).toBe(true);
    expect(new SettledFiles({ now: later, maxBytes: 4 }).wouldKeep(stats(path))).toBe(false);
  });

  it("holds at most maxFiles files and maxBytes bytes, dropping the least recently used", () => {
    const files = new SettledFiles({ now: later, maxFiles: 2, maxBytes: 8 });
    const [a, b, c] = ["aaa", "bbb", "ccc"].map(file);
    files.keep(a!, stats(a!), Buffer.from("aaa"));
    files.keep(b!, stats(b!), Buffer.from("bbb"));
    expect(files.get(a!, stats(a!))).toBeDefined(); // a is now the most recent
    files.keep(c!, stats(c!), Buffer.from("ccc"));
    expect(files.size).toBe(2);
    expect(files.get(b!, stats(b!))).toBeUndefined();
    expect(files.get(a!, stats(a!))).toBeDefined();
    const big = file("123456789");
    files.keep(big, stats(big), Buffer.from("123456789"));
    expect(files.get(big, stats(big))).toBeUndefined();
  });
});

describe("R-4 a kept SKILL.md never hides a change from skills.read", () => {
  async function settledSkill(): Promise<{ entry: SkillEntry; dir: string }> {
    const dirs = layout(temps.make("albedo-settled-read-"));
    const dir = writeSkill(roots.wsAlbedo(dirs.workspace), "demo");
    const entry = findSkill(await discoverCatalog(dirs), "demo");
    if (entry === undefined) throw new Error("demo not discovered");
    await new Promise((resolve) => setTimeout(resolve, UNSETTLED_FILE_MS + 200));
    return { entry, dir };
  }

  it("reads a page of a SKILL.md that has not settled straight from disk and keeps nothing", async () => {
    const dirs = layout(temps.make("albedo-settled-fresh-"));
    writeSkill(roots.wsAlbedo(dirs.workspace), "demo");
    const entry = findSkill(await discoverCatalog(dirs), "demo")!;
    const kept = settledSkillFiles.size;
    const page = await readResource(entry, "SKILL.md", 4, 10);
    expect(page).toMatchObject({ offset: 4, next_offset: 14, truncated: true });
    expect(page.content).toBe(skillText("demo").slice(4, 14));
    expect(settledSkillFiles.size).toBe(kept);
  });

  it("reads a settled SKILL.md from memory, then the new bytes after an in-place edit, then refuses a replaced file", async () => {
    const { entry, dir } = await settledSkill();
    const text = (await readResource(entry)).content;
    const hits = settledSkillFiles.hits;
    expect((await readResource(entry, "SKILL.md", 4, 10)).content).toBe(text.slice(4, 14));
    expect(settledSkillFiles.hits).toBe(hits + 1);

    const edited = skillText("demo", { body: "# demo\n\nEdited in place.\n" });
    writeFileSync(join(dir, "SKILL.md"), edited);
    expect((await readResource(entry)).content).toBe(edited);
    expect(settledSkillFiles.hits).toBe(hits + 1);

    writeFileSync(join(dir, "SKILL.md.new"), edited);
    renameSync(join(dir, "SKILL.md.new"), join(dir, "SKILL.md"));
    const error = await Promise.resolve(readResource(entry)).then(() => undefined, (e: unknown) => e);
    expect((error as AppError).code).toBe("reload_required");
  }, 20_000);
});
