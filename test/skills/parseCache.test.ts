import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { discoverCandidates } from "../../src/skills/discovery.js";
import { MAX_CANDIDATES, MAX_PARSE_CACHE_ENTRIES } from "../../src/skills/limits.js";
import { UNSETTLED_FILE_MS } from "../../src/skills/limits.js";
import { ParseCache } from "../../src/skills/parseCache.js";
import { discoverCatalog, findSkill } from "../../src/skills/snapshot.js";
import { poll } from "../support/poll.js";
import { layout } from "./fixtures.js";
import { roots, skillText, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

/** A clock an hour ahead: every file written here counts as settled, so only stamps decide. */
const settledClock = () => Date.now() + 3_600_000;

function fresh() {
  return layout(temps.make());
}

/** One SKILL.md of the same byte length per version, so only the stamp can tell them apart. */
const version = (name: string, n: number) => skillText(name, { description: `Version ${n} of ${name}.` });

const ctimeOf = (path: string) => statSync(path, { bigint: true }).ctimeNs;

describe("S-9 K-7 the parse cache reuses the parse of an unchanged SKILL.md only", () => {
  it("parses each file once over walks of an unchanged tree, and the snapshot stays the same", async () => {
    const t = fresh();
    for (const name of ["alpha", "beta", "gamma"]) writeSkill(roots.wsAlbedo(t.workspace), name);
    const cache = new ParseCache(settledClock);
    const first = await discoverCatalog(t, cache);
    expect(cache.parses).toBe(3);
    const second = await discoverCatalog(t, cache);
    expect(cache.parses).toBe(3);
    expect(second).toEqual(first);
    writeFileSync(join(roots.wsAlbedo(t.workspace), "beta", "SKILL.md"), skillText("beta", { description: "Changed and longer than before." }));
    const third = await discoverCatalog(t, cache);
    expect(cache.parses).toBe(4);
    expect(findSkill(third, "beta")?.description).toBe("Changed and longer than before.");
  });

  it("reparses a file rewritten in place with the same size and mtime: its ctime moved", async () => {
    const t = fresh();
    const file = join(writeSkill(roots.wsAlbedo(t.workspace), "demo", version("demo", 1)), "SKILL.md");
    // Whole seconds, so the forced mtime is exactly the same nanosecond value both times.
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const cache = new ParseCache(settledClock);
    await discoverCatalog(t, cache);
    const before = statSync(file, { bigint: true });
    // A coarse filesystem clock may need a tick before the rewrite's ctime differs.
    await poll(() => {
      writeFileSync(file, version("demo", 2));
      utimesSync(file, 1_700_000_000, 1_700_000_000);
      return ctimeOf(file) !== before.ctimeNs;
    }, { what: "the rewrite to move SKILL.md's ctime" });
    const after = statSync(file, { bigint: true });
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
    const snapshot = await discoverCatalog(t, cache);
    expect(findSkill(snapshot, "demo")?.description).toBe("Version 2 of demo.");
    expect(cache.parses).toBe(2);
  });

  it("reparses a file replaced by another inode with the same bytes, and pins the new identity", async () => {
    const t = fresh();
    const file = join(writeSkill(roots.wsAlbedo(t.workspace), "demo"), "SKILL.md");
    const cache = new ParseCache(settledClock);
    const before = findSkill(await discoverCatalog(t, cache), "demo")!;
    writeFileSync(`${file}.new`, readFileSync(file));
    renameSync(`${file}.new`, file);
    const after = findSkill(await discoverCatalog(t, cache), "demo")!;
    expect(cache.parses).toBe(2);
    expect(after.sourceIdentity).not.toEqual(before.sourceIdentity);
    expect(after.sourceIdentity.ino).toBe(statSync(file, { bigint: true }).ino.toString());
  });

  it("follows a retargeted skill link even to the very same file, and pins the new real paths", async () => {
    const t = fresh();
    const store = temps.make("albedo-store-");
    const [a, b] = [join(store, "a"), join(store, "b")];
    writeSkill(a, ".", skillText("demo"));
    mkdirSync(b);
    // A hard link: same device, inode, size, mtime and ctime; only the real path differs.
    linkSync(join(a, "SKILL.md"), join(b, "SKILL.md"));
    const link = join(roots.wsAlbedo(t.workspace), "demo");
    mkdirSync(roots.wsAlbedo(t.workspace), { recursive: true });
    symlinkSync(a, link);
    const cache = new ParseCache(settledClock);
    const before = findSkill(await discoverCatalog(t, cache), "demo")!;
    expect([before.resolvedDir, before.resolvedSource]).toEqual([a, join(a, "SKILL.md")]);
    rmSync(link);
    symlinkSync(b, link);
    const after = findSkill(await discoverCatalog(t, cache), "demo")!;
    expect([after.resolvedDir, after.resolvedSource]).toEqual([b, join(b, "SKILL.md")]);
    expect(after.dirIdentity.ino).toBe(statSync(b, { bigint: true }).ino.toString());
    expect(after.sourceIdentity).toEqual(before.sourceIdentity);
    expect(cache.parses).toBe(2);
  });

  it("follows a retargeted SKILL.md link to the new file's text", async () => {
    const t = fresh();
    const store = temps.make("albedo-store-");
    writeFileSync(join(store, "one.md"), version("demo", 1));
    writeFileSync(join(store, "two.md"), version("demo", 2));
    const dir = join(roots.wsAlbedo(t.workspace), "demo");
    mkdirSync(dir, { recursive: true });
    symlinkSync(join(store, "one.md"), join(dir, "SKILL.md"));
    const cache = new ParseCache(settledClock);
    await discoverCatalog(t, cache);
    rmSync(join(dir, "SKILL.md"));
    symlinkSync(join(store, "two.md"), join(dir, "SKILL.md"));
    const after = findSkill(await discoverCatalog(t, cache), "demo")!;
    expect(after.resolvedSource).toBe(join(store, "two.md"));
    expect(after.description).toBe("Version 2 of demo.");
  });

  it("keeps no parse of a file changed less than UNSETTLED_FILE_MS before the walk", async () => {
    const t = fresh();
    const file = join(writeSkill(roots.wsAlbedo(t.workspace), "demo"), "SKILL.md");
    const changedMs = Number(ctimeOf(file) / 1_000_000n);
    let now = changedMs + UNSETTLED_FILE_MS - 1;
    const cache = new ParseCache(() => now);
    await discoverCatalog(t, cache);
    await discoverCatalog(t, cache);
    expect([cache.parses, cache.size]).toEqual([2, 0]);
    now = changedMs + UNSETTLED_FILE_MS + 1;
    await discoverCatalog(t, cache);
    await discoverCatalog(t, cache);
    expect([cache.parses, cache.size]).toEqual([3, 1]);
  });

  it("keeps only the files the last walk saw", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "stays");
    const gone = writeSkill(roots.wsAlbedo(t.workspace), "goes");
    const cache = new ParseCache(settledClock);
    await discoverCatalog(t, cache);
    expect(cache.size).toBe(2);
    rmSync(gone, { recursive: true });
    await discoverCatalog(t, cache);
    expect(cache.size).toBe(1);
  });

  it("keeps invalid files' parse too: the problems come back the same", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "broken", "no frontmatter here\n");
    writeSkill(roots.wsAlbedo(t.workspace), "mismatch", skillText("other-name"));
    const cache = new ParseCache(settledClock);
    const first = await discoverCandidates(t, cache);
    const second = await discoverCandidates(t, cache);
    expect(cache.parses).toBe(2);
    expect(second.candidates.map((c) => c.diagnostics)).toEqual(first.candidates.map((c) => c.diagnostics));
    expect(second.candidates.flatMap((c) => c.diagnostics.map((d) => d.code))).toEqual(["frontmatter_missing", "name_directory_mismatch"]);
  });
});

describe("S-6 the parse cache holds at most MAX_PARSE_CACHE_ENTRIES", () => {
  it("keeps the first MAX_PARSE_CACHE_ENTRIES a walk parses and serves none past them", () => {
    const t = fresh();
    const file = join(writeSkill(roots.wsAlbedo(t.workspace), "demo"), "SKILL.md");
    const stats = statSync(file, { bigint: true });
    const bytes = readFileSync(file);
    const cache = new ParseCache(settledClock);
    const walk = cache.walk();
    for (let i = 0; i <= MAX_PARSE_CACHE_ENTRIES; i++) walk.parse(`/real/${i}/SKILL.md`, stats, bytes);
    walk.finish();
    expect(cache.size).toBe(MAX_PARSE_CACHE_ENTRIES);
    const next = cache.walk();
    expect(next.lookup(`/real/${MAX_PARSE_CACHE_ENTRIES - 1}/SKILL.md`, stats)).toBeDefined();
    expect(next.lookup(`/real/${MAX_PARSE_CACHE_ENTRIES}/SKILL.md`, stats)).toBeUndefined();
  });

  it("a walk over more than MAX_CANDIDATES skills keeps one parse per examined candidate", async () => {
    const t = fresh();
    for (let i = 0; i < MAX_CANDIDATES + 5; i++) writeSkill(roots.wsAlbedo(t.workspace), `s${String(i).padStart(3, "0")}`);
    const cache = new ParseCache(settledClock);
    await discoverCandidates(t, cache);
    expect([cache.parses, cache.size]).toEqual([MAX_CANDIDATES, MAX_PARSE_CACHE_ENTRIES]);
    await discoverCandidates(t, cache);
    expect(cache.parses).toBe(MAX_CANDIDATES);
  });
});
