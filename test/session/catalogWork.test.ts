import { statSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Session } from "../../src/session/index.js";
import { findSkill, UNSETTLED_FILE_MS } from "../../src/skills/index.js";
import { fileCounts as counts, resetFileCounts } from "../support/fileCounts.js";
import { poll } from "../support/poll.js";
import { openSession, sessionDirs, type SessionDirs } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";

// Every walk of the files goes through `discoverEverything`, every settings read through `readSettings`: both counted, both real.
vi.mock("../../src/skills/index.js", async (original) => (await import("../support/fileCounts.js")).countingSkills(await original()));
vi.mock("../../src/settings/index.js", async (original) => (await import("../support/fileCounts.js")).countingSettings(await original()));

let dirs: SessionDirs;
let session: Session;
let globalFile: string;
let projectFile: string;

beforeAll(async () => {
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo");
  // No kernel: what is counted here is the session's catalog work, which an external session does in full.
  session = await openSession(dirs, { kernel: "external" });
  globalFile = join(dirs.stateDir, "settings.json");
  projectFile = join(dirs.workspace, ".albedo", "settings.json");
  await mkdir(join(dirs.workspace, ".albedo"), { recursive: true });
});

afterAll(async () => {
  await session?.close();
  await dirs?.cleanup();
});

beforeEach(resetFileCounts);

describe("D-2 the session owns its refresh: each settings file read once", () => {
  it("rereads each settings file once and walks nothing while they are unchanged", async () => {
    await session.catalog.refresh();
    expect(counts.reads.sort()).toEqual([globalFile, projectFile].sort());
    expect(counts.walks).toBe(0);
  });

  it("reads each file once and walks once when a file changed, and the view follows it", async () => {
    await writeFile(projectFile, JSON.stringify({ skills: { off: ["demo"] } }));
    await session.catalog.refresh();
    expect(counts.reads.sort()).toEqual([globalFile, projectFile].sort());
    expect(counts.walks).toBe(1);
    expect(session.view.effective.demo).toEqual({ enabled: false, decidedBy: "project" });
    await writeFile(projectFile, "{}");
    await session.catalog.refresh();
    expect(session.view.effective.demo?.enabled).toBe(true);
  });
});

describe("D-3 one walk per management catalog read or patch", () => {
  it("walks once for a read, reading each settings file once", async () => {
    const { walk, view } = await session.catalog.walk();
    expect(counts.walks).toBe(1);
    expect(counts.reads.sort()).toEqual([globalFile, projectFile].sort());
    expect(walk.snapshot.revision).toBe(view.discovered.revision);
  });

  it("walks once for a patch: the same walk serves the check and the answer", async () => {
    let seen: string | undefined;
    const { walk, view } = await session.catalog.walk((during, current) => {
      seen = during.snapshot.revision;
      return { ...current.selection.scopes.session, skills: { off: ["demo"] } };
    });
    expect(counts.walks).toBe(1);
    expect(counts.reads).toHaveLength(2);
    expect(walk.snapshot.revision).toBe(seen);
    expect(view.effective.demo).toEqual({ enabled: false, decidedBy: "session" });
    expect(session.view).toBe(view);
    expect(session.view.commands.commands.map((c) => c.name)).not.toContain("/demo");
  });

  it("applies nothing when the change refuses", async () => {
    const before = session.view;
    await expect(session.catalog.walk(() => {
      throw new Error("stale");
    })).rejects.toThrow("stale");
    expect(session.view).toBe(before);
    await session.catalog.walk(() => ({}));
    expect(session.view.effective.demo?.enabled).toBe(true);
  });
});

describe("D-2 needs_reload is derived by the session from its last walk", () => {
  it("is set by a walk that finds new files and cleared by a reload from any face", async () => {
    expect(session.catalog.needsReload).toBe(false);
    writeSkill(roots.wsAgents(dirs.workspace), "later");
    await session.catalog.walk();
    expect(session.catalog.needsReload).toBe(true);
    await session.commands.invoke("/reload", "session", "model");
    expect(session.catalog.needsReload).toBe(false);
    expect(counts.walks).toBe(2);
  });
});

describe("K-7 one chain for reloads, refreshes and catalog walks", () => {
  it("never runs two walks at once, whichever faces start them", async () => {
    const swaps: string[] = [];
    const listening = session.catalog.onChange((view) => swaps.push(view.snapshot.revision));
    try {
      writeSkill(roots.wsAgents(dirs.workspace), "racing");
      await Promise.all([session.reload(), session.catalog.walk(), session.reload(), session.catalog.walk(), session.catalog.refresh()]);
      expect(counts.walks).toBe(4);
      expect(counts.mostWalking).toBe(1);
      expect(swaps.length).toBeGreaterThanOrEqual(2);
      expect(swaps.at(-1)).toBe(session.view.snapshot.revision);
    } finally {
      listening.dispose();
    }
  });

  it("serves the method list of the routes it swapped in", () => {
    expect(session.methods().sort()).toEqual(["commands.catalog", "commands.complete", "commands.invoke", "commands.slash", "skills.list", "skills.read", "skills.resources"]);
  });
});

describe("K-7 a session's walks reparse only the SKILL.md files that changed", () => {
  it("reuses each settled file's parse across reloads and catalog walks, and reparses a rewritten one", async () => {
    const root = join(dirs.workspace, ".agents", "skills");
    const files = (await readdir(root)).map((name) => join(root, name, "SKILL.md"));
    // A file changed within UNSETTLED_FILE_MS of a walk is parsed again by the next one.
    const settled = () => files.every((file) => Date.now() - statSync(file).ctimeMs > UNSETTLED_FILE_MS);
    await poll(settled, { what: "the skill files to be older than UNSETTLED_FILE_MS" });
    await session.reload();
    resetFileCounts();
    await session.reload();
    await session.catalog.walk();
    expect(counts.walks).toBe(2);
    expect(counts.parses).toBe(0);
    writeSkill(roots.wsAgents(dirs.workspace), "demo", { description: "The rewritten demo skill." });
    await session.reload();
    expect(counts.parses).toBe(1);
    expect(findSkill(session.view.snapshot, "demo")?.description).toBe("The rewritten demo skill.");
  });
});
