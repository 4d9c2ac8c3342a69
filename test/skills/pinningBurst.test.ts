import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AppError } from "../../src/errors/index.js";
import { discoverCatalog, findSkill } from "../../src/skills/index.js";
import { checkPinned } from "../../src/skills/pinning.js";
import { UNSETTLED_FILE_MS } from "../../src/skills/limits.js";
import { layout } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

// Counts how often SKILL.md is read from disk for a pin check.
vi.mock("../../src/skills/files.js", async (original) => {
  const real = await original<typeof import("../../src/skills/files.js")>();
  return { ...real, readBoundedFile: vi.fn(real.readBoundedFile) };
});
const { readBoundedFile } = await import("../../src/skills/files.js");

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

/** Concurrent pin checks of one skill. */
const BURST = 200;

async function freshSkill() {
  const dirs = layout(temps.make("albedo-pin-burst-"));
  const dir = writeSkill(roots.wsAlbedo(dirs.workspace), "demo");
  const entry = findSkill(await discoverCatalog(dirs), "demo")!;
  vi.mocked(readBoundedFile).mockClear();
  return { dir, entry };
}

describe("R-4 concurrent pin checks of one skill share one reread", () => {
  it("reads SKILL.md once for a burst of checks that find it unverified, and not again once verified", async () => {
    const { dir, entry } = await freshSkill();
    appendFileSync(join(dir, "SKILL.md"), "\nMore steps.\n");
    await Promise.all(Array.from({ length: BURST }, () => checkPinned(entry)));
    expect(vi.mocked(readBoundedFile)).toHaveBeenCalledTimes(1);
    await Promise.all(Array.from({ length: BURST }, () => checkPinned(entry)));
    expect(vi.mocked(readBoundedFile)).toHaveBeenCalledTimes(1);
    // Verified while just written: once it has settled, the next burst shares one more reread, and that is the last.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + UNSETTLED_FILE_MS + 1000);
      await Promise.all(Array.from({ length: BURST }, () => checkPinned(entry)));
      expect(vi.mocked(readBoundedFile)).toHaveBeenCalledTimes(2);
      await Promise.all(Array.from({ length: BURST }, () => checkPinned(entry)));
      expect(vi.mocked(readBoundedFile)).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("gives every check of the burst the reread's verdict", async () => {
    const { dir, entry } = await freshSkill();
    writeFileSync(join(dir, "SKILL.md"), "---\nname: demo\ndescription: Something else now.\n---\nBody.\n");
    const verdicts = await Promise.all(Array.from({ length: BURST }, () => Promise.resolve(checkPinned(entry)).then(() => "ok", (e: unknown) => (e as AppError).code)));
    expect(new Set(verdicts)).toEqual(new Set(["reload_required"]));
    expect(vi.mocked(readBoundedFile)).toHaveBeenCalledTimes(1);
  });
});
