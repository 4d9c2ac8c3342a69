import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../../src/errors/index.js";
import { prepareActivation } from "../../src/skills/activation.js";
import { discoverCatalog, findSkill, type SkillEntry } from "../../src/skills/index.js";
import { MAX_SKILL_FILE_BYTES } from "../../src/skills/limits.js";
import { checkPinned } from "../../src/skills/pinning.js";
import { readResource } from "../../src/skills/read.js";
import { UNSETTLED_FILE_MS } from "../../src/skills/limits.js";
import { listResources } from "../../src/skills/resources.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, skillText, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

function sandbox() {
  const base = temps.make("albedo-pinning-");
  const dirs = layout(base);
  return { base, ...dirs, skills: roots.wsAlbedo(dirs.workspace) };
}

async function entryOf(dirs: { workspace: string; home: string; install: string }, name = "demo"): Promise<SkillEntry> {
  const entry = findSkill(await discoverCatalog(dirs), name);
  if (entry === undefined) throw new Error(`skill ${name} not discovered`);
  return entry;
}

/** Every access path must refuse with reload_required naming the skill. */
async function expectReloadRequired(entry: SkillEntry): Promise<void> {
  const calls: (() => unknown)[] = [
    () => checkPinned(entry),
    () => readResource(entry),
    () => readResource(entry, "references/a.md"),
    () => listResources(entry),
    () => prepareActivation(entry, ""),
  ];
  for (const call of calls) {
    const error = await Promise.resolve(call()).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("reload_required");
    expect((error as AppError).message).toContain(`"${entry.name}"`);
  }
}

/** A linked skill: store copies A and B, the installed name is a link to A. */
function linkedLayout() {
  const box = sandbox();
  const a = writeSkill(join(box.base, "store-a"), "demo");
  writeFile(join(a, "references", "a.md"), "a");
  const b = join(box.base, "store-b", "demo");
  cpSync(a, b, { recursive: true });
  mkdirSync(box.skills, { recursive: true });
  symlinkSync(a, join(box.skills, "demo"));
  return { box, a, b, installed: join(box.skills, "demo") };
}

function retarget(link: string, target: string): void {
  symlinkSync(target, `${link}.new`);
  renameSync(`${link}.new`, link);
}

describe("R-4 pinning", () => {
  it("passes while nothing changed", async () => {
    const { box } = linkedLayout();
    const entry = await entryOf(box);
    expect((await checkPinned(entry)).ino.toString()).toBe(entry.sourceIdentity.ino);
    expect((await readResource(entry, "references/a.md")).content).toBe("a");
  });

  it("requires reload when the skill directory link is retargeted to an identical copy", async () => {
    const { box, b, installed } = linkedLayout();
    const entry = await entryOf(box);
    retarget(installed, b);
    await expectReloadRequired(entry);
  });

  it("requires reload when a linked SKILL.md is retargeted", async () => {
    const box = sandbox();
    const dir = join(box.skills, "demo");
    writeFile(join(dir, "references", "a.md"), "a");
    writeFile(join(box.base, "one", "SKILL.md"), skillText("demo"));
    writeFile(join(box.base, "two", "SKILL.md"), skillText("demo"));
    symlinkSync(join(box.base, "one", "SKILL.md"), join(dir, "SKILL.md"));
    const entry = await entryOf(box);
    retarget(join(dir, "SKILL.md"), join(box.base, "two", "SKILL.md"));
    await expectReloadRequired(entry);
  });

  it("requires reload when SKILL.md is replaced by renaming a new file over it (an editor's save), and says that an edit in place would not", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "references", "a.md"), "a");
    const entry = await entryOf(box);
    writeFileSync(join(dir, "SKILL.md.tmp"), readFileSync(join(dir, "SKILL.md")));
    renameSync(join(dir, "SKILL.md.tmp"), join(dir, "SKILL.md"));
    await expectReloadRequired(entry);
    for (const attempt of [checkPinned(entry), readResource(entry), readResource(entry, "SKILL.md", 0, 64, undefined, {})]) {
      await expect(attempt).rejects.toThrow(
        'skill "demo" changed on disk (SKILL.md was replaced by a new file in its place, as editors that save by replacement do; an edit in place needs no reload); run `/reload session` to use it',
      );
    }
  });

  it("requires reload when SKILL.md is moved away and a link to the same file takes its place", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "references", "a.md"), "a");
    const entry = await entryOf(box);
    // Same (device, inode) through the link: only the real path tells the two apart.
    renameSync(join(dir, "SKILL.md"), join(box.base, "moved.md"));
    symlinkSync(join(box.base, "moved.md"), join(dir, "SKILL.md"));
    await expectReloadRequired(entry);
  });

  it("requires reload when the skill directory is replaced by a renamed copy", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "references", "a.md"), "a");
    const entry = await entryOf(box);
    cpSync(dir, `${dir}.copy`, { recursive: true });
    rmSync(dir, { recursive: true });
    renameSync(`${dir}.copy`, dir);
    await expectReloadRequired(entry);
  });

  it("requires reload when the skill vanished", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    const entry = await entryOf(box);
    rmSync(dir, { recursive: true });
    await expectReloadRequired(entry);
  });

  it("requires reload when name or description changes in place", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "references", "a.md"), "a");
    const entry = await entryOf(box);
    writeFileSync(join(dir, "SKILL.md"), skillText("demo", { description: "A different description." }));
    await expectReloadRequired(entry);
    writeFileSync(join(dir, "SKILL.md"), skillText("other"));
    await expectReloadRequired(entry);
    writeFileSync(join(dir, "SKILL.md"), "no frontmatter any more\n");
    await expectReloadRequired(entry);
  });

  it("notices a same-size in-place description edit after checks that passed (no stale fast path)", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(dir, "references", "a.md"), "a");
    const entry = await entryOf(box);
    await checkPinned(entry);
    await checkPinned(entry);
    const file = join(dir, "SKILL.md");
    const before = readFileSync(file, "utf8");
    const after = before.replace(entry.description, entry.description.replace(/.$/, "?"));
    expect(after).not.toBe(before);
    expect(after.length).toBe(before.length);
    writeFileSync(file, after);
    await expectReloadRequired(entry);
  });

  it("keeps an in-place body edit readable without reload", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    const entry = await entryOf(box);
    const edited = skillText("demo", { frontmatter: "license: MIT\n", body: "# demo\n\nNew steps, edited in place.\n" });
    writeFileSync(join(dir, "SKILL.md"), edited);
    expect((await checkPinned(entry)).ino.toString()).toBe(entry.sourceIdentity.ino);
    expect((await readResource(entry)).content).toBe(edited);
    expect((await prepareActivation(entry, "")).instructions).toBe("# demo\n\nNew steps, edited in place.");
  });

  it("refuses with limit_exceeded when SKILL.md grows past MAX_SKILL_FILE_BYTES in place", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    const entry = await entryOf(box);
    truncateSync(join(dir, "SKILL.md"), MAX_SKILL_FILE_BYTES + 1);
    const error = await Promise.resolve(checkPinned(entry)).then(() => undefined, (e: unknown) => e);
    expect((error as AppError).code).toBe("limit_exceeded");
    expect((error as AppError).message).toContain("MAX_SKILL_FILE_BYTES");
  });

  it("resolves resource links at each list and read, without requiring reload", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    writeFile(join(box.base, "v1", "guide.md"), "version one");
    writeFile(join(box.base, "v2", "guide.md"), "version two");
    writeFile(join(box.base, "v2", "extra.md"), "extra");
    symlinkSync(join(box.base, "v1"), join(dir, "docs"));
    const entry = await entryOf(box);
    expect((await listResources(entry)).resources).toEqual(["SKILL.md", "docs/guide.md"]);
    retarget(join(dir, "docs"), join(box.base, "v2"));
    expect((await listResources(entry)).resources).toEqual(["SKILL.md", "docs/extra.md", "docs/guide.md"]);
    expect((await readResource(entry, "docs/guide.md")).content).toBe("version two");
  });

  it("answers at once when SKILL.md's stamp was verified (a fresh file's only until it settles); any change goes back to the full check", async () => {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    const entry = await entryOf(box);
    const file = join(dir, "SKILL.md");
    // The first read rereads SKILL.md (a promise); the next finds the stamp verified and answers at once.
    const reread = readResource(entry);
    expect(reread).toBeInstanceOf(Promise);
    const first = await reread;
    expect(first.content).toBe(readFileSync(file, "utf8"));
    expect(readResource(entry)).toEqual(first);
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      // The file was fresh when verified: once it has settled, one more reread, then answers at once again.
      vi.setSystemTime(Date.now() + UNSETTLED_FILE_MS + 1000);
      const settled = readResource(entry);
      expect(settled).toBeInstanceOf(Promise);
      expect(await settled).toEqual(first);
      const now = readResource(entry);
      expect(now).not.toBeInstanceOf(Promise);
      expect(now).toEqual(first);
      vi.setSystemTime(Date.now() + 60_000);
      expect(readResource(entry)).not.toBeInstanceOf(Promise);
      // A same-size description edit moves the stamp: no answer at once, and the reread refuses.
      const text = readFileSync(file, "utf8");
      writeFileSync(file, text.replace(entry.description, entry.description.replace(/.$/, "?")));
      const edited = readResource(entry);
      expect(edited).toBeInstanceOf(Promise);
      const error = await (edited as Promise<unknown>).then(() => undefined, (e: unknown) => e);
      expect((error as AppError).code).toBe("reload_required");
      // A replaced SKILL.md is refused before anything is read, synchronously.
      writeFileSync(`${file}.new`, text);
      renameSync(`${file}.new`, file);
      await expect(readResource(entry)).rejects.toThrow(/replaced/);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("R-4 calls that arrived together share a pin check", () => {
  /** A skill "demo" whose pins were checked once, so its next checks answer at once. */
  async function verifiedDemo(): Promise<{ dir: string; entry: SkillEntry }> {
    const box = sandbox();
    const dir = writeSkill(box.skills, "demo");
    const entry = await entryOf(box);
    await checkPinned(entry);
    return { dir, entry };
  }

  it("the first check of an arrival answers its other calls; another arrival, or none, checks afresh", async () => {
    const { dir, entry } = await verifiedDemo();
    const first = {};
    const stats = checkPinned(entry, first);
    expect(stats).not.toBeInstanceOf(Promise);
    // Replaced after the arrival's check: its calls were all sent before that check ran.
    writeFileSync(join(dir, "SKILL.md.tmp"), readFileSync(join(dir, "SKILL.md")));
    renameSync(join(dir, "SKILL.md.tmp"), join(dir, "SKILL.md"));
    expect(checkPinned(entry, first)).toBe(stats);
    // The page itself is still read through a descriptor whose identity must be the pinned file's.
    await expect(readResource(entry, "SKILL.md", 0, 64, undefined, first)).rejects.toThrow(/replaced by a new file/);
    await expect(checkPinned(entry, {})).rejects.toThrow(/changed on disk/);
    await expect(checkPinned(entry)).rejects.toThrow(/changed on disk/);
  });

  it("keeps no failed check: the arrival's next call checks again", async () => {
    const { dir, entry } = await verifiedDemo();
    const arrival = {};
    renameSync(dir, `${dir}.away`);
    await expect(checkPinned(entry, arrival)).rejects.toThrow(/changed on disk/);
    renameSync(`${dir}.away`, dir);
    expect(checkPinned(entry, arrival)).not.toBeInstanceOf(Promise);
  });
});
