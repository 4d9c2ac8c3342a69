import { fstatSync, mkdirSync, realpathSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { traceRealPath } from "../../src/sandbox/paths.js";
import { planKey, SandboxPlan, type ExposureRequest, type SandboxPlaces } from "../../src/sandbox/plan.js";
import { tempDir, tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-plan-");
let base: string;
let places: SandboxPlaces;
const plans: SandboxPlan[] = [];

beforeEach(() => {
  base = realpathSync(temps.make());
  places = { workspace: join(base, "home", "ws"), home: join(base, "home"), stateDir: join(base, "home", ".albedo"), runDir: join(base, "home", ".albedo", "run", "a") };
  for (const dir of [places.workspace, places.runDir, join(places.stateDir, "run", "b"), join(base, "shared", "x"), join(places.home, ".ssh")]) mkdirSync(dir, { recursive: true });
});

afterEach(() => {
  for (const plan of plans.splice(0)) plan.close();
  temps.cleanup();
});

function plan(requests: ExposureRequest[]): SandboxPlan {
  const made = SandboxPlan.make(places, requests);
  plans.push(made);
  return made;
}

const ro = (path: string, extra: Partial<ExposureRequest> = {}): ExposureRequest => ({ path, kind: "ro", what: "test dir", ...extra });
/** Read-only destinations beyond the workspace's own protected dirs. */
const exposed = (made: SandboxPlan) =>
  made.pinned.filter((pin) => pin.kind === "ro").flatMap((pin) => pin.dests).filter((dest) => !/\/ws\/\.(albedo|agents)$/.test(dest));

describe("K-10 the sandbox plan decides what is exposed from where a link really leads and who could have laid it", () => {
  it("a link in the workspace is bound only when it leads inside the workspace", () => {
    mkdirSync(join(places.workspace, "inside"));
    mkdirSync(join(places.workspace, ".agents"));
    symlinkSync("../inside", join(places.workspace, ".agents", "in"));
    symlinkSync(join(base, "shared"), join(places.workspace, ".agents", "out"));
    const made = plan([ro(join(places.workspace, ".agents", "in")), ro(join(places.workspace, ".agents", "out"))]);
    expect(exposed(made)).toContain(join(places.workspace, "inside"));
    expect(exposed(made)).not.toContain(join(base, "shared"));
    expect(made.notes.map((note) => note.message)).toEqual([expect.stringMatching(/a link the kernel can rewrite leads outside the workspace/)]);
  });

  it("a user root linked elsewhere is bound at its target and at its own path; one inside the state dir is allowed", () => {
    symlinkSync(join(base, "shared"), join(places.home, ".agents-skills"));
    mkdirSync(join(places.stateDir, "skills"));
    const made = plan([
      ro(join(places.home, ".agents-skills"), { userRoot: join(places.home, ".agents-skills") }),
      ro(join(places.stateDir, "skills"), { userRoot: join(places.stateDir, "skills") }),
    ]);
    expect(exposed(made)).toEqual(expect.arrayContaining([join(base, "shared"), join(places.home, ".agents-skills"), join(places.stateDir, "skills")]));
    expect(made.notes).toEqual([]);
  });

  it("a link on the visible system (a venv linked elsewhere) is bound at its target only: it resolves inside by itself", () => {
    const { dir: outside, remove } = tempDir("albedo-plan-", "/var/tmp");
    try {
      mkdirSync(join(outside, "real-venv"));
      symlinkSync(join(outside, "real-venv"), join(outside, "venv"));
      const made = plan([ro(join(outside, "venv"))]);
      expect(made.pinned.find((pin) => pin.real === join(outside, "real-venv"))?.dests).toEqual([join(outside, "real-venv")]);
    } finally {
      remove();
    }
  });

  it("nothing resolving into the state dir, the run dirs, the home itself or a pseudo-filesystem is bound, whoever laid the link", () => {
    const cases: [string, string][] = [
      ["to-state", places.stateDir],
      ["to-run", join(places.stateDir, "run")],
      ["to-other-run", join(places.stateDir, "run", "b")],
      ["to-home", places.home],
      ["to-proc", "/proc/self"],
      ["to-root", "/"],
    ];
    for (const [name, target] of cases) symlinkSync(target, join(base, name));
    const made = plan(cases.map(([name]) => ro(join(base, name), { userRoot: join(base, name) })));
    expect(exposed(made)).toEqual([]);
    expect(made.notes.map((note) => note.message)).toEqual([
      expect.stringMatching(/the state dir itself/),
      expect.stringMatching(/among the sessions' run dirs/),
      expect.stringMatching(/among the sessions' run dirs/),
      expect.stringMatching(/the home directory itself/),
      expect.stringMatching(/pseudo-filesystem/),
      expect.stringMatching(/contains the state dir/),
    ]);
  });

  it("a user root reached through a link inside the workspace counts as the kernel's: it must stay in the workspace", () => {
    symlinkSync(places.workspace, join(places.home, "via-ws"));
    symlinkSync(join(base, "shared"), join(places.workspace, "leak"));
    mkdirSync(join(places.workspace, "kept"));
    const made = plan([ro(join(places.home, "via-ws", "leak"), { userRoot: join(places.home, "via-ws", "leak") }), ro(join(places.home, "via-ws", "kept"))]);
    expect(exposed(made)).not.toContain(join(base, "shared"));
    expect(exposed(made)).toContain(join(places.workspace, "kept"));
  });

  it("pins by descriptor: a directory replaced after planning is not what the plan binds", () => {
    mkdirSync(join(base, "shared", "pinned"));
    const made = plan([ro(join(base, "shared", "pinned"))]);
    const pin = made.pinned.find((p) => p.real === join(base, "shared", "pinned"))!;
    renameSync(join(base, "shared", "pinned"), join(base, "shared", "moved"));
    mkdirSync(join(base, "shared", "pinned"));
    const held = fstatSync(pin.fd, { bigint: true });
    expect([held.dev, held.ino]).toEqual([pin.dev, pin.ino]);
    expect(realpathSync(`/proc/self/fd/${pin.fd}`)).toBe(join(base, "shared", "moved"));
  });

  it("keeps the workspace's .albedo and .agents read-only, creating them when absent", () => {
    const made = plan([]);
    const dests = made.pinned.filter((pin) => pin.kind === "ro").flatMap((pin) => pin.dests);
    expect(dests).toEqual([join(places.workspace, ".albedo"), join(places.workspace, ".agents")]);
  });

  it("its key follows what it binds: a new workspace link outside changes nothing, a new user root does", () => {
    const requests = [ro(join(places.workspace, ".agents", "skills")), ro(join(places.home, ".agents", "skills"), { userRoot: join(places.home, ".agents", "skills") })];
    // The user's own .agents (a plan removes the empty one it made when it closes).
    mkdirSync(join(places.workspace, ".agents"), { recursive: true });
    const before = planKey(places, requests);
    symlinkSync(join(base, "shared"), join(places.workspace, ".agents", "skills"));
    expect(planKey(places, requests)).toBe(before);
    mkdirSync(join(places.home, ".agents", "skills"), { recursive: true });
    expect(planKey(places, requests)).not.toBe(before);
  });

  it("refuses a workspace inside the state dir", () => {
    mkdirSync(join(places.stateDir, "ws"));
    expect(() => SandboxPlan.make({ ...places, workspace: join(places.stateDir, "ws") }, [])).toThrow(/inside the state dir/);
  });
});

describe("K-10 traceRealPath resolves like realpath and names the links it followed", () => {
  it("agrees with realpath through relative, absolute and chained links, and refuses loops", () => {
    mkdirSync(join(base, "a", "b"), { recursive: true });
    writeFileSync(join(base, "a", "b", "f"), "x");
    symlinkSync("a/b", join(base, "rel"));
    symlinkSync(join(base, "rel"), join(base, "abs"));
    symlinkSync("../abs/f", join(base, "a", "up"));
    for (const path of [join(base, "rel"), join(base, "abs", "f"), join(base, "a", "up"), join(base, "a", "b", "..", "b")]) {
      expect(traceRealPath(path)?.real).toBe(realpathSync(path));
    }
    expect(traceRealPath(join(base, "a", "up"))?.linkParents).toEqual([join(base, "a"), base, base]);
    symlinkSync("loop2", join(base, "loop1"));
    symlinkSync("loop1", join(base, "loop2"));
    expect(traceRealPath(join(base, "loop1"))).toBeUndefined();
    expect(traceRealPath(join(base, "missing"))).toBeUndefined();
  });
});
