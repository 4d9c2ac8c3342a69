import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { discoverCatalog, findSkill, type SkillEntry } from "../../src/skills/index.js";
import { listResources } from "../../src/skills/resources.js";
import { MAX_RESOURCE_DEPTH, MAX_RESOURCE_ENTRIES, MAX_RESOURCES } from "../../src/skills/limits.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, skillText, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

function sandbox() {
  const base = temps.make("albedo-resources-");
  const dirs = layout(base);
  return { base, ...dirs, skills: roots.wsAlbedo(dirs.workspace) };
}

async function entryOf(dirs: { workspace: string; home: string; install: string }, name: string): Promise<SkillEntry> {
  const snapshot = await discoverCatalog(dirs);
  const entry = findSkill(snapshot, name);
  if (entry === undefined) throw new Error(`skill ${name} not discovered: ${JSON.stringify(snapshot.diagnostics)}`);
  return entry;
}

function codes(listing: { diagnostics: readonly { code: string }[] }): string[] {
  return listing.diagnostics.map((d) => d.code);
}

describe("R-1 resources listing", () => {
  it("lists files under the installed directory, sorted, SKILL.md included", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "references", "formats.md"), "# formats\n");
    writeFile(join(dir, "scripts", "run.sh"), "echo hi\n");
    writeFile(join(dir, "a-b.txt"), "x");
    writeFile(join(dir, "a", "x.txt"), "x");
    mkdirSync(join(dir, "empty"));
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toEqual(["SKILL.md", "a-b.txt", "a/x.txt", "references/formats.md", "scripts/run.sh"]);
    expect(listing.diagnostics).toEqual([]);
  });

  it("follows relative and absolute links to files and directories outside the skill, under installed names", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    const shared = join(box.base, "shared");
    writeFile(join(shared, "guide.md"), "guide");
    writeFile(join(shared, "lib", "one.md"), "one");
    symlinkSync(join(shared, "guide.md"), join(dir, "abs-guide.md"));
    symlinkSync("../../../../shared/guide.md", join(dir, "rel-guide.md"));
    symlinkSync(join(shared, "lib"), join(dir, "abs-lib"));
    symlinkSync("../../../../shared/lib", join(dir, "rel-lib"));
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toEqual(["SKILL.md", "abs-guide.md", "abs-lib/one.md", "rel-guide.md", "rel-lib/one.md"]);
    expect(listing.diagnostics).toEqual([]);
  });

  it("lists two links to the same directory as two separate sets of names", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "real", "a.md"), "a");
    writeFile(join(dir, "real", "sub", "b.md"), "b");
    symlinkSync("real", join(dir, "alias1"));
    symlinkSync(join(dir, "real"), join(dir, "alias2"));
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toEqual([
      "SKILL.md",
      "alias1/a.md",
      "alias1/sub/b.md",
      "alias2/a.md",
      "alias2/sub/b.md",
      "real/a.md",
      "real/sub/b.md",
    ]);
  });

  it("skips a link back to an ancestor directory with a diagnostic", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "sub", "x.md"), "x");
    symlinkSync("..", join(dir, "sub", "up"));
    symlinkSync(".", join(dir, "self"));
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toEqual(["SKILL.md", "sub/x.md"]);
    expect(listing.diagnostics.map((d) => [d.code, d.path])).toEqual([
      ["link_to_ancestor", join(dir, "self")],
      ["link_to_ancestor", join(dir, "sub", "up")],
    ]);
  });

  it("reports link cycles and broken links and keeps listing the rest", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    symlinkSync("loop-b", join(dir, "loop-a"));
    symlinkSync("loop-a", join(dir, "loop-b"));
    symlinkSync("nowhere.md", join(dir, "broken.md"));
    writeFile(join(dir, "ok.md"), "ok");
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toEqual(["SKILL.md", "ok.md"]);
    expect(codes(listing).sort()).toEqual(["broken_link", "link_cycle", "link_cycle"]);
    expect(listing.diagnostics.every((d) => d.path.startsWith(dir) && d.message.length > 0)).toBe(true);
  });

  it("treats the installed directory's siblings as resources when only SKILL.md is a link", async () => {
    const box = sandbox();
    const elsewhere = join(box.base, "elsewhere");
    writeFile(join(elsewhere, "SKILL.md"), skillText("demo"));
    writeFile(join(elsewhere, "target-only.md"), "not a resource of the installed dir");
    const dir = join(box.skills, "demo");
    writeFile(join(dir, "references", "local.md"), "local");
    symlinkSync(join(elsewhere, "SKILL.md"), join(dir, "SKILL.md"));
    const entry = await entryOf(box, "demo");
    expect(entry.dir).toBe(dir);
    const listing = await listResources(entry);
    expect(listing.resources).toEqual(["SKILL.md", "references/local.md"]);
  });

  it("lists through a linked skill directory under the installed names", async () => {
    const box = sandbox();
    const store = writeSkill(join(box.base, "store"), "demo");
    writeFile(join(store, "assets", "logo.txt"), "logo");
    mkdirSync(box.skills, { recursive: true });
    symlinkSync(store, join(box.skills, "demo"));
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toEqual(["SKILL.md", "assets/logo.txt"]);
  });

  it("skips a FIFO and a link to /dev/zero without opening them", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    execFileSync("mkfifo", [join(dir, "pipe")]);
    symlinkSync("/dev/zero", join(dir, "zero"));
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toEqual(["SKILL.md"]);
    expect(listing.diagnostics.map((d) => [d.code, d.path])).toEqual([
      ["not_regular_file", join(dir, "pipe")],
      ["not_regular_file", join(dir, "zero")],
    ]);
  });
});

describe("R-1 resources bounds", () => {
  it(`returns at most MAX_RESOURCES = ${MAX_RESOURCES} files and says how many were left out`, async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    for (let i = 0; i < 599; i++) writeFile(join(dir, "many", `f${String(i).padStart(3, "0")}.md`), "");
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toHaveLength(MAX_RESOURCES);
    const cut = listing.diagnostics.find((d) => d.code === "resource_limit");
    expect(cut?.message).toContain(`88 more files`);
    expect(cut?.message).toContain(`MAX_RESOURCES = ${MAX_RESOURCES}`);
  });

  it("returns exactly MAX_RESOURCES files with no diagnostic", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    for (let i = 0; i < MAX_RESOURCES - 1; i++) writeFile(join(dir, "many", `f${String(i).padStart(3, "0")}.md`), "");
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.resources).toHaveLength(MAX_RESOURCES);
    expect(listing.diagnostics).toEqual([]);
  });

  it(`stops after MAX_RESOURCE_ENTRIES = ${MAX_RESOURCE_ENTRIES} entries with a diagnostic`, async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    for (let i = 0; i < 2100; i++) mkdirSync(join(dir, `d${String(i).padStart(4, "0")}`));
    const listing = await listResources(await entryOf(box, "demo"));
    expect(codes(listing)).toEqual(["resource_entries_limit"]);
    expect(listing.diagnostics[0]!.message).toContain(`MAX_RESOURCE_ENTRIES = ${MAX_RESOURCE_ENTRIES}`);
  });

  it("examines exactly MAX_RESOURCE_ENTRIES entries with no diagnostic", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    // SKILL.md + sub + (MAX - 2) empty directories inside sub = MAX entries in all.
    for (let i = 0; i < MAX_RESOURCE_ENTRIES - 2; i++) mkdirSync(join(dir, "sub", `d${String(i).padStart(4, "0")}`), { recursive: true });
    const listing = await listResources(await entryOf(box, "demo"));
    expect(listing.diagnostics).toEqual([]);
    expect(listing.resources).toEqual(["SKILL.md"]);
  });

  it(`descends at most MAX_RESOURCE_DEPTH = ${MAX_RESOURCE_DEPTH} directory levels`, async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    let path = dir;
    for (let level = 1; level <= 20; level++) {
      path = join(path, `d${level}`);
      writeFile(join(path, "f.md"), String(level));
    }
    const listing = await listResources(await entryOf(box, "demo"));
    const depths = listing.resources.filter((r) => r !== "SKILL.md").map((r) => r.split("/").length - 1);
    expect(depths.sort((a, b) => a - b)).toEqual(Array.from({ length: MAX_RESOURCE_DEPTH }, (_, i) => i + 1));
    expect(codes(listing)).toEqual(["resource_depth_limit"]);
    expect(listing.diagnostics[0]!.path.endsWith(`/d${MAX_RESOURCE_DEPTH + 1}`)).toBe(true);
    expect(listing.diagnostics[0]!.message).toContain(`MAX_RESOURCE_DEPTH = ${MAX_RESOURCE_DEPTH}`);
  });
});
