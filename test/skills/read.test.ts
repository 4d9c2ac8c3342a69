import { execFileSync } from "node:child_process";
import { readFileSync, realpathSync, renameSync, rmSync, symlinkSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors/index.js";
import { discoverCatalog, findSkill, type SkillEntry } from "../../src/skills/index.js";
import { readResource, type ReadResult } from "../../src/skills/read.js";
import { MAX_READ_LIMIT, MAX_RESOURCE_BYTES } from "../../src/skills/limits.js";
import { checkResourcePath } from "../../src/skills/resourcePath.js";
import { MAX_RESOURCE_DEPTH, MAX_RESOURCE_PATH_LENGTH } from "../../src/skills/limits.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

/** A discovered skill "demo" with the given extra files; returns its entry and directory. */
async function demoSkill(files: Record<string, string | Buffer> = {}): Promise<{ entry: SkillEntry; dir: string; base: string }> {
  const base = temps.make("albedo-read-");
  const dirs = layout(base);
  const dir = writeSkill(roots.wsAlbedo(dirs.workspace), "demo");
  for (const [path, content] of Object.entries(files)) writeFile(join(dir, path), content);
  const entry = findSkill(await discoverCatalog(dirs), "demo");
  if (entry === undefined) throw new Error("demo skill not discovered");
  return { entry, dir, base };
}

/** Reads a resource page by page and returns the pages. */
async function allPages(entry: SkillEntry, resource: string, limit: number): Promise<ReadResult[]> {
  const pages: ReadResult[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const page: ReadResult = await readResource(entry, resource, offset, limit);
    pages.push(page);
    offset = page.next_offset;
  }
  return pages;
}

function bytesOf(page: ReadResult): Buffer {
  return page.encoding === "base64" ? Buffer.from(page.content, "base64") : Buffer.from(page.content, "utf8");
}

async function expectCode(promise: unknown, code: string, ...fragments: string[]): Promise<AppError> {
  const error = await Promise.resolve(promise).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  for (const fragment of fragments) expect((error as AppError).message).toContain(fragment);
  return error as AppError;
}

describe("R-2 reads", () => {
  it("reads SKILL.md by default, whole, as UTF-8", async () => {
    const { entry, dir } = await demoSkill();
    const text = readFileSync(join(dir, "SKILL.md"), "utf8");
    const page = await readResource(entry);
    expect(page).toEqual({ content: text, encoding: "utf-8", size: Buffer.byteLength(text), offset: 0, next_offset: null, truncated: false });
  });

  it("pages through a file and next_offset resumes exactly", async () => {
    const text = "0123456789".repeat(5);
    const { entry } = await demoSkill({ "notes.txt": text });
    const first = await readResource(entry, "notes.txt", 0, 16);
    expect(first).toMatchObject({ content: text.slice(0, 16), size: 50, offset: 0, next_offset: 16, truncated: true });
    const pages = await allPages(entry, "notes.txt", 16);
    expect(pages.map((p) => p.content).join("")).toBe(text);
    expect(pages.at(-1)).toMatchObject({ next_offset: null, truncated: false });
  });

  it("never ends a text page inside a multi-byte sequence (emoji, CJK) and resumes exactly", async () => {
    const text = "ab😀c漢字d🎉é\n".repeat(7);
    const { entry } = await demoSkill({ "multi.md": text });
    for (let limit = 4; limit <= 13; limit++) {
      const pages = await allPages(entry, "multi.md", limit);
      expect(pages.every((p) => p.encoding === "utf-8")).toBe(true);
      expect(pages.map((p) => p.content).join("")).toBe(text);
      for (const page of pages) expect(Buffer.byteLength(page.content)).toBeLessThanOrEqual(limit);
    }
  });

  it("ends a page before an emoji the limit would cut and sets next_offset to its first byte", async () => {
    const { entry } = await demoSkill({ "e.md": "ab😀cd" });
    expect(await readResource(entry, "e.md", 0, 4)).toMatchObject({ content: "ab", encoding: "utf-8", next_offset: 2, truncated: true });
    expect(await readResource(entry, "e.md", 2, 4)).toMatchObject({ content: "😀", encoding: "utf-8", next_offset: 6 });
  });

  it("returns a page whose limit is smaller than one sequence as base64, so paging still advances", async () => {
    const { entry } = await demoSkill({ "e.md": "😀" });
    const page = await readResource(entry, "e.md", 0, 2);
    expect(page).toMatchObject({ encoding: "base64", next_offset: 2, truncated: true });
    expect(bytesOf(page)).toEqual(Buffer.from("😀").subarray(0, 2));
  });

  it("returns a page starting inside a sequence as base64 of exactly the bytes read", async () => {
    const { entry } = await demoSkill({ "e.md": "漢字abc" });
    const page = await readResource(entry, "e.md", 1, 5);
    expect(page.encoding).toBe("base64");
    expect(bytesOf(page)).toEqual(Buffer.from("漢字abc").subarray(1, 6));
    expect(page.next_offset).toBe(6);
  });

  it("returns binary and invalid UTF-8 as base64, byte for byte", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff]);
    const invalid = Buffer.concat([Buffer.from("valid text "), Buffer.from([0xc3, 0x28]), Buffer.from(" more")]);
    const withNul = Buffer.from("text\0with a NUL");
    const { entry } = await demoSkill({ "logo.png": png, "bad.txt": invalid, "nul.txt": withNul });
    for (const [name, bytes] of [["logo.png", png], ["bad.txt", invalid], ["nul.txt", withNul]] as const) {
      const page = await readResource(entry, name);
      expect(page.encoding).toBe("base64");
      expect(bytesOf(page)).toEqual(bytes);
    }
  });

  it("returns a file ending in a cut-off sequence as base64 at the end instead of looping", async () => {
    const bytes = Buffer.concat([Buffer.from("abc"), Buffer.from("😀").subarray(0, 2)]);
    const { entry } = await demoSkill({ "cut.txt": bytes });
    const pages = await allPages(entry, "cut.txt", 4);
    expect(Buffer.concat(pages.map(bytesOf))).toEqual(bytes);
    expect(pages.length).toBeLessThanOrEqual(2);
  });

  it("returns an empty last page for offset at or beyond the size", async () => {
    const { entry } = await demoSkill({ "n.txt": "12345" });
    for (const offset of [5, 6, 1_000_000]) {
      expect(await readResource(entry, "n.txt", offset)).toEqual({ content: "", encoding: "utf-8", size: 5, offset, next_offset: null, truncated: false });
    }
  });

  it(`accepts limit MAX_READ_LIMIT = ${MAX_READ_LIMIT} and refuses one more with limit_exceeded`, async () => {
    const { entry } = await demoSkill({ "big.txt": "x".repeat(MAX_READ_LIMIT + 10) });
    const page = await readResource(entry, "big.txt", 0, MAX_READ_LIMIT);
    expect(page).toMatchObject({ next_offset: MAX_READ_LIMIT, truncated: true });
    expect(page.content).toHaveLength(MAX_READ_LIMIT);
    await expectCode(readResource(entry, "big.txt", 0, MAX_READ_LIMIT + 1), "limit_exceeded", "MAX_READ_LIMIT", String(MAX_READ_LIMIT + 1));
  });

  it("refuses bad offsets and limits with invalid_params", async () => {
    const { entry } = await demoSkill();
    for (const [offset, limit] of [[-1, 10], [1.5, 10], [Number.NaN, 10], [0, 0], [0, -5], [0, 2.5]] as const) {
      await expectCode(readResource(entry, "SKILL.md", offset, limit), "invalid_params");
    }
  });

  it(`reads a resource of exactly MAX_RESOURCE_BYTES and refuses a 17 MiB one before reading`, async () => {
    const { entry, dir } = await demoSkill({ "edge.bin": "", "huge.bin": "" });
    truncateSync(join(dir, "edge.bin"), MAX_RESOURCE_BYTES);
    truncateSync(join(dir, "huge.bin"), 17 * 1024 * 1024);
    const edge = await readResource(entry, "edge.bin", MAX_RESOURCE_BYTES - 8, 100);
    expect(edge).toMatchObject({ size: MAX_RESOURCE_BYTES, next_offset: null, encoding: "base64" });
    expect(bytesOf(edge)).toEqual(Buffer.alloc(8));
    await expectCode(readResource(entry, "huge.bin"), "limit_exceeded", "MAX_RESOURCE_BYTES", String(17 * 1024 * 1024));
  });

  it("refuses a FIFO, a link to /dev/zero and a directory without blocking", async () => {
    const { entry, dir } = await demoSkill({ "references/x.md": "x" });
    execFileSync("mkfifo", [join(dir, "pipe")]);
    symlinkSync("/dev/zero", join(dir, "zero"));
    await expectCode(readResource(entry, "pipe"), "invalid_params", "FIFO");
    await expectCode(readResource(entry, "zero"), "invalid_params", "device");
    await expectCode(readResource(entry, "references"), "invalid_params", "directory");
  });

  it("reports missing files, broken links and link cycles as not_found", async () => {
    const { entry, dir } = await demoSkill();
    symlinkSync("gone.md", join(dir, "broken.md"));
    symlinkSync("loop-b", join(dir, "loop-a"));
    symlinkSync("loop-a", join(dir, "loop-b"));
    await expectCode(readResource(entry, "absent.md"), "not_found", "absent.md", "does not exist");
    await expectCode(readResource(entry, "broken.md"), "not_found", "broken");
    await expectCode(readResource(entry, "loop-a"), "not_found", "cycle");
    await expectCode(readResource(entry, "SKILL.md/inside"), "not_found");
  });

  it("reads through links that point outside the skill, resolving them at each read", async () => {
    const { entry, dir, base } = await demoSkill();
    writeFile(join(base, "shared", "one.md"), "one");
    writeFile(join(base, "shared", "two.md"), "two");
    writeFile(join(base, "shared", "lib", "deep.md"), "deep");
    symlinkSync(join(base, "shared", "one.md"), join(dir, "abs.md"));
    symlinkSync("../../../../shared/one.md", join(dir, "rel.md"));
    symlinkSync(join(base, "shared", "lib"), join(dir, "lib"));
    expect((await readResource(entry, "abs.md")).content).toBe("one");
    expect((await readResource(entry, "rel.md")).content).toBe("one");
    expect((await readResource(entry, "lib/deep.md")).content).toBe("deep");
    rmSync(join(dir, "rel.md"));
    symlinkSync("../../../../shared/two.md", join(dir, "rel.tmp"));
    renameSync(join(dir, "rel.tmp"), join(dir, "rel.md"));
    expect((await readResource(entry, "rel.md")).content).toBe("two");
  });

  it(`reads a file ${MAX_RESOURCE_DEPTH} directories deep and refuses a path one level deeper`, async () => {
    const deep = Array.from({ length: MAX_RESOURCE_DEPTH }, (_, i) => `d${i + 1}`).join("/");
    const { entry } = await demoSkill({ [`${deep}/f.md`]: "deep", [`${deep}/d17/f.md`]: "too deep" });
    expect((await readResource(entry, `${deep}/f.md`)).content).toBe("deep");
    await expectCode(readResource(entry, `${deep}/d17/f.md`), "limit_exceeded", "MAX_RESOURCE_DEPTH");
  });
});

describe("R-3 resource paths", () => {
  const bad = ["", "/etc/passwd", "../outside.md", "a/../SKILL.md", "references/..", "a\\b.md", "..\\outside.md", "a\0b", "a//b.md", "SKILL.md/", "./SKILL.md", "references/./x.md"];

  it.each(bad.map((path) => [JSON.stringify(path), path]))("refuses %s with invalid_params", (_label, path) => {
    expect(() => checkResourcePath(path)).toThrow(AppError);
    try {
      checkResourcePath(path);
    } catch (error) {
      expect((error as AppError).code).toBe("invalid_params");
    }
  });

  it("accepts plain relative paths and returns their segments", () => {
    expect(checkResourcePath("SKILL.md")).toEqual(["SKILL.md"]);
    expect(checkResourcePath("references/a b/ü.md")).toEqual(["references", "a b", "ü.md"]);
    expect(checkResourcePath("..hidden/x..md")).toEqual(["..hidden", "x..md"]);
  });

  it("refuses a non-string and an over-long path", () => {
    expect(() => checkResourcePath(42)).toThrow(/must be a string/);
    const long = "a/".repeat(MAX_RESOURCE_PATH_LENGTH / 2) + "b";
    expect(() => checkResourcePath(long)).toThrow(/MAX_RESOURCE_PATH_LENGTH/);
  });

  it("refuses a climbing path even when the file it names exists", async () => {
    const { entry, dir } = await demoSkill();
    writeFile(join(dir, "..", "outside.md"), "secret");
    await expectCode(readResource(entry, "../outside.md"), "invalid_params", "..");
    await expectCode(readResource(entry, join(dir, "SKILL.md")), "invalid_params", "absolute");
  });

  it("checks the path before touching the disk: a bad path on a vanished skill is invalid_params, not reload_required", async () => {
    const { entry, dir } = await demoSkill();
    rmSync(dir, { recursive: true });
    for (const path of bad) await expectCode(readResource(entry, path), "invalid_params");
    await expectCode(readResource(entry, "SKILL.md"), "reload_required");
  });

  it("allows a path through a link inside the skill that points outside it", async () => {
    const { entry, dir, base } = await demoSkill();
    writeFile(join(base, "outside", "ok.md"), "reachable by link");
    symlinkSync(join(base, "outside"), join(dir, "ext"));
    expect((await readResource(entry, "ext/ok.md")).content).toBe("reachable by link");
  });
});

describe("R-3 the path guard (a sandboxed session's) sees each resource's real path", () => {
  it("gets the pinned directory plus the segments when no segment is a link, and the link's target when one is", async () => {
    const { entry, dir, base } = await demoSkill({ "references/notes.md": "plain" });
    writeFile(join(base, "hidden", "secret.md"), "never served");
    symlinkSync(join(base, "hidden"), join(dir, "refs"));
    symlinkSync(join(base, "hidden", "secret.md"), join(dir, "key.md"));
    const seen: string[] = [];
    const hidden = realpathSync(join(base, "hidden"));
    const guard = (real: string) => (seen.push(real), !real.startsWith(hidden));
    expect((await readResource(entry, "references/notes.md", 0, 100, guard)).content).toBe("plain");
    expect(seen).toContain(join(entry.resolvedDir, "references", "notes.md"));
    for (const resource of ["refs/secret.md", "key.md"]) {
      const refused = await Promise.resolve(readResource(entry, resource, 0, 100, guard)).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).code).toBe("forbidden");
    }
    expect(seen).toContain(join(hidden, "secret.md"));
  });
});
