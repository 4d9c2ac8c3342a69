import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { patchSessionCatalog, readSessionCatalog } from "../../src/daemon/catalog.js";
import { LiveSession } from "../../src/daemon/live.js";
import type { StreamEvent } from "../../src/daemon/sessionPort.js";
import { HttpProblem } from "../../src/daemon/problem.js";
import type { Session } from "../../src/session/index.js";
import { openSession, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { fileCounts as counts, resetFileCounts } from "../support/fileCounts.js";
import { roots, writeSkill } from "../support/skills.js";

// Every walk of the files goes through `discoverEverything`, every settings read through `readSettings`: both counted, both real.
vi.mock("../../src/skills/index.js", async (original) => (await import("../support/fileCounts.js")).countingSkills(await original()));
vi.mock("../../src/settings/index.js", async (original) => (await import("../support/fileCounts.js")).countingSettings(await original()));

let dirs: SessionDirs;
let session: Session;

beforeAll(async () => {
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo");
  writeSkill(roots.wsAgents(dirs.workspace), "other");
  // The catalog routes' work without HTTP around it, on a session with no kernel of its own.
  session = await openSession(dirs, { kernel: "external" });
});

afterAll(async () => {
  await session?.close();
  await dirs?.cleanup();
});

beforeEach(resetFileCounts);

describe("D-3 GET and PATCH /sessions/{id}/catalog walk the files once", () => {
  it("a read walks once and reads each settings file once", async () => {
    const catalog = await readSessionCatalog(session);
    expect(counts.walks).toBe(1);
    expect(counts.reads).toHaveLength(2);
    expect(new Set(counts.reads).size).toBe(2);
    expect(catalog.skills.map((row) => row.name)).toEqual(expect.arrayContaining(["demo", "other"]));
  });

  it("a patch walks once: the revision check and the answer come from the same walk", async () => {
    const current = await readSessionCatalog(session);
    resetFileCounts();
    const patched = await patchSessionCatalog(session, current.revision, { off: ["demo"] });
    expect(counts.walks).toBe(1);
    expect(counts.reads).toHaveLength(2);
    expect(patched.revision).not.toBe(current.revision);
    expect(patched.skills.find((row) => row.name === "demo")).toMatchObject({ session_override: "off", effective: { enabled: false, decided_by: "session" } });
    expect(session.view.effective.demo).toEqual({ enabled: false, decidedBy: "session" });
  });

  it("a stale revision walks once and changes nothing", async () => {
    const before = session.view;
    const refused = await patchSessionCatalog(session, "stale", { clear: ["demo"] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HttpProblem);
    expect((refused as HttpProblem).code).toBe("catalog_changed");
    expect(counts.walks).toBe(1);
    expect(session.view).toBe(before);
  });

  it("the read's walk sets needs_reload when the files moved on, and never reloads", async () => {
    const revision = session.view.snapshot.revision;
    writeSkill(roots.wsAgents(dirs.workspace), "added");
    const catalog = await readSessionCatalog(session);
    expect(catalog.skills.map((row) => row.name)).toContain("added");
    expect(session.catalog.needsReload).toBe(true);
    expect(session.view.snapshot.revision).toBe(revision);
  });
});

describe("D-2 LiveSession fans a swapped catalog out to its stream", () => {
  it("publishes one status per swap, whichever face swapped it", async () => {
    const live = new LiveSession(session);
    const events: StreamEvent[] = [];
    const subscription = live.subscribe((event) => events.push(event));
    try {
      await session.commands.invoke("/reload", "", "model");
      await patchSessionCatalog(session, (await readSessionCatalog(session)).revision, { clear: ["demo"] });
      expect(events).toEqual([
        { type: "status", kernel: "external", revision: expect.any(String) },
        { type: "status", kernel: "external", revision: session.view.snapshot.revision },
      ]);
      expect(session.catalog.needsReload).toBe(false);
    } finally {
      subscription.dispose();
    }
  });
});
