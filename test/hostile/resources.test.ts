import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors/index.js";
import { discoverCatalog, findSkill, listResources, readResource, type SkillEntry } from "../../src/skills/index.js";
import { LIVENESS_MS, junkBytes, makeFifo, makeLayout, sparseFile, type Layout } from "./trees.js";
import { writeSkill } from "../support/skills.js";

/** Past MAX_RESOURCE_BYTES (16 MiB), sparse so it costs no disk. */
const HUGE_RESOURCE_BYTES = 20 * 1024 * 1024;

/** The AppError code `promise` rejects with; fails the test on success or on any other error. */
/** The code of the AppError `read` fails with, whether it throws at once or its promise rejects. */
async function rejection(read: () => unknown): Promise<string> {
  let error: unknown;
  try {
    await read();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).code;
}

describe("R-1 R-2 R-3 hostile resources", () => {
  let layout: Layout;
  let entry: SkillEntry;

  beforeAll(async () => {
    layout = makeLayout();
    const dir = writeSkill(layout.root, "nasty");
    writeFileSync(join(dir, "ok.txt"), "fine\n");
    writeFileSync(join(dir, "junk.bin"), junkBytes(300));
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "deep.txt"), "deep\n");
    symlinkSync("/dev/zero", join(dir, "zero"));
    symlinkSync("/dev/urandom", join(dir, "sub", "random"));
    makeFifo(join(dir, "pipe"));
    symlinkSync("loop", join(dir, "loop"));
    symlinkSync("..", join(dir, "sub", "up"));
    symlinkSync("missing.txt", join(dir, "dangling"));
    sparseFile(join(dir, "huge.bin"), HUGE_RESOURCE_BYTES);
    writeFileSync(join(layout.base, "outside.txt"), "outside\n");
    const snapshot = await discoverCatalog({ workspace: layout.workspace, home: layout.home, install: layout.install });
    entry = findSkill(snapshot, "nasty")!;
    expect(entry).toBeDefined();
  });
  afterAll(() => layout?.remove());

  it("listing skips devices, FIFOs, cycles and ancestor links with diagnostics and never opens them", async () => {
    const listing = await listResources(entry);
    expect(listing.resources).toEqual(["SKILL.md", "huge.bin", "junk.bin", "ok.txt", "sub/deep.txt"]);
    const byPath = Object.fromEntries(listing.diagnostics.map((d) => [d.path.slice(entry.dir.length + 1), d.code]));
    expect(byPath).toEqual({
      zero: "not_regular_file",
      pipe: "not_regular_file",
      "sub/random": "not_regular_file",
      loop: "link_cycle",
      "sub/up": "link_to_ancestor",
      dangling: "broken_link",
    });
  }, LIVENESS_MS);

  it("reading a device link or a FIFO is invalid_params and returns at once", async () => {
    for (const resource of ["zero", "pipe", "sub/random", "sub"]) expect(await rejection(() => readResource(entry, resource))).toBe("invalid_params");
  }, LIVENESS_MS);

  it("a cycle or dangling link is not_found; a resource past MAX_RESOURCE_BYTES is limit_exceeded", async () => {
    expect(await rejection(() => readResource(entry, "loop"))).toBe("not_found");
    expect(await rejection(() => readResource(entry, "dangling"))).toBe("not_found");
    expect(await rejection(() => readResource(entry, "huge.bin"))).toBe("limit_exceeded");
  }, LIVENESS_MS);

  it("paths that climb out are refused before the disk, even when the target exists", async () => {
    for (const resource of ["../../../../outside.txt", "/etc/passwd", "sub/../../nasty/ok.txt", "ok.txt\0", "sub\\deep.txt", "./ok.txt", ""]) {
      expect(await rejection(() => readResource(entry, resource)), JSON.stringify(resource)).toBe("invalid_params");
    }
  });

  it("binary junk comes back as base64 of exactly its bytes", async () => {
    const page = await readResource(entry, "junk.bin");
    expect(page.encoding).toBe("base64");
    expect(Buffer.from(page.content, "base64")).toEqual(junkBytes(300));
  });
});
