import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { discoverCandidates } from "../../src/skills/discovery.js";
import { MAX_CANDIDATES, MAX_DIAGNOSTICS, MAX_SKILL_FILE_BYTES } from "../../src/skills/limits.js";
import { discoverCatalog, findSkill } from "../../src/skills/snapshot.js";
import type { CatalogSnapshot } from "../../src/skills/types.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, skillText, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";
import { installDir } from "../../src/platform/index.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

function fresh() {
  return layout(temps.make());
}

const names = (s: CatalogSnapshot) => s.skills.map((k) => k.name);
const codesAt = (s: CatalogSnapshot, path: string) => s.diagnostics.filter((d) => d.path.startsWith(path)).map((d) => d.code);

describe("S-1 roots", () => {
  it("scans the five roots, immediate children only, missing roots are fine", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "one");
    writeSkill(roots.wsAgents(t.workspace), "two");
    writeSkill(roots.homeAlbedo(t.home), "three");
    writeSkill(roots.homeAgents(t.home), "four");
    writeSkill(roots.builtin(t.install), "five");
    writeSkill(join(roots.wsAlbedo(t.workspace), "group"), "nested");
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["five", "four", "one", "three", "two"]);
    expect(snapshot.skills.map((s) => [s.name, s.scope])).toContainEqual(["five", "builtin"]);
    expect(snapshot.skills.find((s) => s.name === "four")?.scope).toBe("user");
    expect(codesAt(snapshot, join(roots.wsAlbedo(t.workspace), "group"))).toEqual(["missing_skill_md"]);
    expect(await discoverCatalog(fresh())).toMatchObject({ skills: [], diagnostics: [], instructions: [] });
  });

  it("ignores plain files and dot-entries in a root", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "real");
    writeFile(join(roots.wsAlbedo(t.workspace), "README.md"), "notes");
    writeSkill(roots.wsAlbedo(t.workspace), ".hidden");
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["real"]);
    expect(snapshot.diagnostics).toEqual([]);
  });

  it("discovers the real install root and every builtin found is valid", async () => {
    const t = fresh();
    const found = await discoverCandidates({ ...t, install: installDir() });
    const builtins = found.candidates.filter((c) => c.scope === "builtin");
    for (const c of builtins) expect({ dir: c.dir, status: c.status, diagnostics: c.diagnostics }).toEqual({ dir: c.dir, status: "valid", diagnostics: [] });
  });
});

describe("S-2 S-5 links", () => {
  it("accepts a Nix-style link whose name differs from its target directory", async () => {
    const t = fresh();
    const store = join(temps.make("albedo-store-"), "0abc-demo-1.2.3");
    writeSkill(store, ".", skillText("demo"));
    mkdirSync(roots.wsAlbedo(t.workspace), { recursive: true });
    symlinkSync(store, join(roots.wsAlbedo(t.workspace), "demo"));
    const snapshot = await discoverCatalog(t);
    const entry = findSkill(snapshot, "demo")!;
    expect(entry.source).toBe(join(roots.wsAlbedo(t.workspace), "demo", "SKILL.md"));
    expect(entry.resolvedDir).toBe(store);
    expect(entry.resolvedSource).toBe(join(store, "SKILL.md"));
  });

  it("the link name, not the target name, must equal the frontmatter name", async () => {
    const t = fresh();
    const store = join(temps.make("albedo-store-"), "demo");
    writeSkill(store, ".", skillText("demo"));
    mkdirSync(roots.wsAlbedo(t.workspace), { recursive: true });
    symlinkSync(store, join(roots.wsAlbedo(t.workspace), "other"));
    const snapshot = await discoverCatalog(t);
    expect(snapshot.skills).toEqual([]);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["name_directory_mismatch"]);
  });

  it("follows relative links for skill dirs, SKILL.md and the root itself", async () => {
    const t = fresh();
    const shared = join(t.workspace, "shared");
    writeSkill(shared, "rel-dir");
    writeFile(join(shared, "bodies", "linked.md"), skillText("linked-file"));
    const root = roots.wsAgents(t.workspace);
    mkdirSync(root, { recursive: true });
    symlinkSync(relative(root, join(shared, "rel-dir")), join(root, "rel-dir"));
    mkdirSync(join(root, "linked-file"));
    symlinkSync(relative(join(root, "linked-file"), join(shared, "bodies", "linked.md")), join(root, "linked-file", "SKILL.md"));
    const userRoots = join(t.home, ".albedo");
    mkdirSync(userRoots, { recursive: true });
    const realUserRoot = join(t.home, "elsewhere");
    writeSkill(realUserRoot, "via-root");
    symlinkSync("../elsewhere", join(userRoots, "skills"));
    const snapshot = await discoverCatalog(t);
    expect(snapshot.diagnostics).toEqual([]);
    expect(names(snapshot)).toEqual(["linked-file", "rel-dir", "via-root"]);
    const linked = findSkill(snapshot, "linked-file")!;
    expect(linked.source).toBe(join(root, "linked-file", "SKILL.md"));
    expect(linked.resolvedSource).toBe(join(shared, "bodies", "linked.md"));
    expect(findSkill(snapshot, "via-root")!.source).toBe(join(userRoots, "skills", "via-root", "SKILL.md"));
  });

  it("broken links, cycles and unreadable targets are per-candidate diagnostics", async () => {
    const t = fresh();
    const root = roots.wsAlbedo(t.workspace);
    writeSkill(root, "good");
    symlinkSync(join(t.workspace, "nowhere"), join(root, "broken"));
    symlinkSync(join(root, "loop-b"), join(root, "loop-a"));
    symlinkSync(join(root, "loop-a"), join(root, "loop-b"));
    writeFile(join(t.workspace, "plain.txt"), "not a dir");
    symlinkSync(join(t.workspace, "plain.txt"), join(root, "to-file"));
    mkdirSync(join(root, "bad-md"));
    symlinkSync(join(t.workspace, "gone.md"), join(root, "bad-md", "SKILL.md"));
    mkdirSync(join(root, "md-dir", "SKILL.md"), { recursive: true });
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["good"]);
    const byPath = Object.fromEntries(snapshot.diagnostics.map((d) => [relative(root, d.path), d.code]));
    expect(byPath).toEqual({
      broken: "broken_link",
      "loop-a": "link_cycle",
      "loop-b": "link_cycle",
      "to-file": "not_directory",
      "bad-md/SKILL.md": "broken_link",
      "md-dir/SKILL.md": "not_regular_file",
    });
  });

  it("a child whose name is not valid UTF-8 is invalid_name_encoding showing its bytes, not a vanished link; others still load", async () => {
    const t = fresh();
    const root = roots.wsAlbedo(t.workspace);
    writeSkill(root, "good");
    // Node decodes names as UTF-8 with U+FFFD for bad bytes, so only a Buffer path reaches this directory.
    const raw = Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff, 0xfe]), Buffer.from("-é")]);
    mkdirSync(raw);
    writeFileSync(Buffer.concat([raw, Buffer.from("/SKILL.md")]), skillText("bad"));
    symlinkSync(join(root, "good"), Buffer.concat([Buffer.from(`${root}/link`), Buffer.from([0xc3])]));
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["good"]);
    expect(snapshot.diagnostics.map(({ severity, code, path, message }) => ({ severity, code, path, message }))).toEqual([
      { severity: "error", code: "invalid_name_encoding", path: join(root, "bad\\xff\\xfe-é"), message: "directory name is not valid UTF-8: bad\\xff\\xfe-é" },
      { severity: "error", code: "invalid_name_encoding", path: join(root, "link\\xc3"), message: "directory name is not valid UTF-8: link\\xc3" },
    ]);
  });

  it("a root that is a broken link, a cycle or a file is a diagnostic, other roots still load", async () => {
    const t = fresh();
    mkdirSync(join(t.workspace, ".albedo"), { recursive: true });
    symlinkSync(join(t.workspace, "missing"), roots.wsAlbedo(t.workspace));
    mkdirSync(join(t.workspace, ".agents"), { recursive: true });
    symlinkSync(roots.wsAgents(t.workspace), roots.wsAgents(t.workspace));
    writeFile(roots.homeAlbedo(t.home), "a file, not a directory");
    writeSkill(roots.homeAgents(t.home), "survivor");
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["survivor"]);
    expect(snapshot.diagnostics.map((d) => [d.path, d.code])).toEqual([
      [roots.homeAlbedo(t.home), "not_directory"],
      [roots.wsAgents(t.workspace), "link_cycle"],
      [roots.wsAlbedo(t.workspace), "broken_link"],
    ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
  });

  it.skipIf(process.getuid?.() === 0)("an unreadable skill directory is a diagnostic (skipped as root: root reads chmod 000 directories)", async () => {
    const t = fresh();
    const root = roots.wsAlbedo(t.workspace);
    writeSkill(root, "good");
    const locked = writeSkill(root, "locked");
    chmodSync(locked, 0o000);
    try {
      const snapshot = await discoverCatalog(t);
      expect(names(snapshot)).toEqual(["good"]);
      expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["unreadable"]);
    } finally {
      chmodSync(locked, 0o755);
    }
  });

  it("a FIFO where SKILL.md should be is refused without blocking", async () => {
    const t = fresh();
    const root = roots.wsAlbedo(t.workspace);
    writeSkill(root, "good");
    mkdirSync(join(root, "piped"));
    execFileSync("mkfifo", [join(root, "piped", "SKILL.md")]);
    mkdirSync(join(root, "piped-link"));
    symlinkSync(join(root, "piped", "SKILL.md"), join(root, "piped-link", "SKILL.md"));
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["good"]);
    expect(snapshot.diagnostics.map((d) => [relative(root, d.path), d.code])).toEqual([
      ["piped-link/SKILL.md", "not_regular_file"],
      ["piped/SKILL.md", "not_regular_file"],
    ]);
    expect(snapshot.diagnostics[0]!.message).toContain("FIFO");
  });

  it("a lowercase skill.md is reported, not loaded, by discovery", async () => {
    const t = fresh();
    const root = roots.wsAlbedo(t.workspace);
    writeFile(join(root, "lower", "skill.md"), skillText("lower"));
    const snapshot = await discoverCatalog(t);
    expect(snapshot.skills).toEqual([]);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["lowercase_skill_md"]);
  });
});

describe("S-3 S-4 in discovery", () => {
  it("invalid metadata, CRLF, BOM and unknown tags are handled per candidate", async () => {
    const t = fresh();
    const root = roots.wsAlbedo(t.workspace);
    writeSkill(root, "crlf", skillText("crlf").replace(/\n/g, "\r\n"));
    writeSkill(root, "bom", `\uFEFF${skillText("bom")}`);
    writeSkill(root, "tagged", { description: "!!python/name:os.system x" });
    writeSkill(root, "binary", Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe, 0x0a]));
    writeSkill(root, "extra", { description: "d", frontmatter: "x-vendor: keep me\n" });
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["bom", "crlf", "extra"]);
    expect(snapshot.diagnostics.map((d) => [relative(root, d.path), d.severity, d.code])).toEqual([
      ["binary/SKILL.md", "error", "invalid_utf8"],
      ["extra/SKILL.md", "warning", "unknown_field"],
      ["tagged/SKILL.md", "error", "yaml_tag"],
    ]);
  });

  it("a 2 MiB SKILL.md is file_too_large; exactly MAX_SKILL_FILE_BYTES is read", async () => {
    const t = fresh();
    const root = roots.wsAlbedo(t.workspace);
    const huge = join(writeSkill(root, "huge"), "SKILL.md");
    truncateSync(huge, 2 * 1024 * 1024);
    const edge = join(writeSkill(root, "edge"), "SKILL.md");
    truncateSync(edge, MAX_SKILL_FILE_BYTES);
    const snapshot = await discoverCatalog(t);
    expect(names(snapshot)).toEqual(["edge"]);
    expect(findSkill(snapshot, "edge")!.size).toBe(MAX_SKILL_FILE_BYTES);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["file_too_large"]);
  });

  it("a YAML bomb is a diagnostic", async () => {
    const t = fresh();
    let yaml = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (let i = 1; i < 12; i++) yaml += `a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(", ")}]\n`;
    writeSkill(roots.wsAlbedo(t.workspace), "bomb", { description: "d", frontmatter: yaml });
    const snapshot = await discoverCatalog(t);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["yaml_alias_limit"]);
  });
});

describe("S-6 bounds", () => {
  it("examines at most MAX_CANDIDATES of 200 and says how many were dropped", async () => {
    const t = fresh();
    for (let i = 0; i < 200; i++) writeSkill(roots.wsAlbedo(t.workspace), `s${String(i).padStart(3, "0")}`);
    writeSkill(roots.homeAlbedo(t.home), "late");
    const found = await discoverCandidates(t);
    expect(found.candidates).toHaveLength(MAX_CANDIDATES);
    const snapshot = await discoverCatalog(t);
    expect(snapshot.skills).toHaveLength(MAX_CANDIDATES);
    expect(names(snapshot)).not.toContain("late");
    expect(snapshot.diagnostics).toEqual([
      { severity: "warning", code: "candidates_dropped", path: roots.wsAlbedo(t.workspace), message: `73 more candidates not examined (MAX_CANDIDATES = ${MAX_CANDIDATES})` },
    ]);
  });

  it("keeps at most MAX_DIAGNOSTICS diagnostics, the last one saying how many were dropped", async () => {
    const t = fresh();
    for (let i = 0; i < 100; i++) writeSkill(roots.wsAlbedo(t.workspace), `bad${String(i).padStart(3, "0")}`, "no frontmatter");
    const snapshot = await discoverCatalog(t);
    expect(snapshot.diagnostics).toHaveLength(MAX_DIAGNOSTICS);
    expect(snapshot.diagnostics.at(-1)).toMatchObject({ code: "diagnostics_dropped", message: `37 more diagnostics not shown (MAX_DIAGNOSTICS = ${MAX_DIAGNOSTICS})` });
  });
});

describe("S-7 precedence", () => {
  it("workspace beats user beats builtin, silently", async () => {
    const t = fresh();
    writeSkill(roots.builtin(t.install), "shared", { description: "builtin copy" });
    writeSkill(roots.homeAgents(t.home), "shared", { description: "user copy" });
    writeSkill(roots.wsAgents(t.workspace), "shared", { description: "workspace copy" });
    writeSkill(roots.homeAlbedo(t.home), "mine", { description: "user copy" });
    writeSkill(roots.builtin(t.install), "mine", { description: "builtin copy" });
    const snapshot = await discoverCatalog(t);
    expect(snapshot.skills.map((s) => [s.name, s.description, s.scope])).toEqual([
      ["mine", "user copy", "user"],
      ["shared", "workspace copy", "workspace"],
    ]);
    expect(snapshot.diagnostics).toEqual([]);
    const found = await discoverCandidates(t);
    const loser = found.candidates.find((c) => c.scope === "builtin" && c.name === "shared")!;
    expect(loser).toMatchObject({ status: "shadowed", shadowedBy: join(roots.wsAgents(t.workspace), "shared", "SKILL.md") });
  });

  it("within one scope the earlier root wins and the loser is a collision", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "dup", { description: "first" });
    writeSkill(roots.wsAgents(t.workspace), "dup", { description: "second" });
    const snapshot = await discoverCatalog(t);
    expect(snapshot.skills.map((s) => s.description)).toEqual(["first"]);
    expect(snapshot.diagnostics).toMatchObject([{ severity: "warning", code: "collision", path: join(roots.wsAgents(t.workspace), "dup", "SKILL.md") }]);
  });

  it("an invalid workspace copy does not hide a valid user copy", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "tool", { description: "" });
    writeSkill(roots.homeAlbedo(t.home), "tool", { description: "works" });
    const snapshot = await discoverCatalog(t);
    expect(snapshot.skills.map((s) => [s.name, s.scope])).toEqual([["tool", "user"]]);
    expect(snapshot.diagnostics.map((d) => d.code)).toEqual(["empty_description"]);
  });

  it("two discoveries of the same tree give byte-identical JSON", async () => {
    const t = fresh();
    for (const n of ["zeta", "alpha", "mid", "bad_one"]) writeSkill(roots.wsAlbedo(t.workspace), n);
    writeSkill(roots.homeAlbedo(t.home), "alpha");
    writeFile(join(t.workspace, "AGENTS.md"), "Be careful.\n");
    const a = JSON.stringify(await discoverCatalog(t));
    const b = JSON.stringify(await discoverCatalog(t));
    expect(a).toBe(b);
    expect(JSON.parse(a).skills.map((s: { name: string }) => s.name)).toEqual(["alpha", "mid", "zeta"]);
  });

  it("discoverCandidates reports every candidate with its status", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "ok");
    writeSkill(roots.wsAlbedo(t.workspace), "broken", "nope");
    writeSkill(roots.homeAlbedo(t.home), "ok");
    const found = await discoverCandidates(t);
    expect(found.candidates.map((c) => [c.rootIndex, c.dirName, c.status])).toEqual([
      [0, "broken", "invalid"],
      [0, "ok", "valid"],
      [2, "ok", "shadowed"],
    ]);
    expect(found.candidates[0]!.diagnostics.map((d) => d.code)).toEqual(["frontmatter_missing"]);
  });
});

describe("S-8 S-9 snapshot", () => {
  it("is deep-frozen, pins identities and real paths, and advertises the installed source", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "demo", { description: "d", frontmatter: "license: MIT\n" });
    writeSkill(roots.wsAlbedo(t.workspace), "help");
    const snapshot = await discoverCatalog(t);
    expect(Object.isFrozen(snapshot) && Object.isFrozen(snapshot.skills) && Object.isFrozen(snapshot.skills[0]!.dirIdentity)).toBe(true);
    expect(() => (snapshot.skills as unknown as unknown[]).push(1)).toThrow();
    const demo = findSkill(snapshot, "demo")!;
    expect(demo.dirIdentity.ino).toMatch(/^\d+$/);
    expect(demo.sourceIdentity.dev).toMatch(/^\d+$/);
    expect(demo.optional).toEqual({ license: "MIT" });
    expect(snapshot.revision).toMatch(/^[0-9a-f]{64}$/);
    expect(findSkill(snapshot, "absent")).toBeUndefined();
  });

  it("findSkill answers a name as given or in its NFKC form, from each snapshot's own skills", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "file-tool", { description: "one" });
    writeSkill(roots.wsAlbedo(t.workspace), "demo");
    const first = await discoverCatalog(t);
    const tool = findSkill(first, "file-tool")!;
    expect(tool.description).toBe("one");
    // A ligature and full-width letters name the same skill once normalized.
    expect(findSkill(first, "\uFB01le-tool")).toBe(tool);
    expect(findSkill(first, "\uFF46ile-tool")).toBe(tool);
    expect(findSkill(first, "File-tool")).toBeUndefined();
    writeSkill(roots.wsAlbedo(t.workspace), "file-tool", { description: "two" });
    const second = await discoverCatalog(t);
    expect(findSkill(second, "file-tool")!.description).toBe("two");
    expect(findSkill(first, "file-tool")).toBe(tool);
  });

  it("the revision changes when content on disk changes", async () => {
    const t = fresh();
    writeSkill(roots.wsAlbedo(t.workspace), "demo", { description: "one" });
    const before = (await discoverCatalog(t)).revision;
    writeSkill(roots.wsAlbedo(t.workspace), "demo", { description: "two" });
    expect((await discoverCatalog(t)).revision).not.toBe(before);
  });
});
