import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isAppError } from "../../src/errors/index.js";
import {
  ABSENT_REVISION,
  globalSettingsTarget,
  patchSkills,
  projectSettingsTarget,
  readSettings,
  SETTINGS_LOCK_FILE,
  settingsRevision,
  updateSettings,
  type Settings,
} from "../../src/settings/index.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-settings-write-");
afterEach(() => temps.cleanup());

const withDemoOn = (current: Settings): Settings => patchSkills(current, { on: ["demo"] });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the update to fail");
    },
    (caught: unknown) => caught,
  );
}

describe("D-4 settings writes", () => {
  it("creates a missing file (and the project's .albedo directory) with mode 0600", async () => {
    const state = temps.make();
    const workspace = temps.make();
    const target = projectSettingsTarget(workspace, state);
    const written = await updateSettings(target, withDemoOn, { expectedRevision: ABSENT_REVISION });
    expect(written.settings).toEqual({ skills: { on: ["demo"] } });
    expect(statSync(target.file).mode & 0o777).toBe(0o600);
    expect(written.revision).toBe(settingsRevision(readFileSync(target.file)));
  });

  it("rewrites an existing 0644 file as 0600 and leaves no temp file behind; the lock file stays, empty and 0600", async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    writeFileSync(target.file, '{"network":false}');
    chmodSync(target.file, 0o644);
    await updateSettings(target, (current) => ({ ...current, network: true }));
    expect(statSync(target.file).mode & 0o777).toBe(0o600);
    expect(readdirSync(state).sort()).toEqual(["settings.json", SETTINGS_LOCK_FILE]);
    const lock = statSync(join(state, SETTINGS_LOCK_FILE));
    expect({ size: lock.size, mode: lock.mode & 0o777 }).toEqual({ size: 0, mode: 0o600 });
  });

  it("preserves unknown top-level fields and the order of keys through an update", async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    const original = {
      theme: { colors: ["#000", "#fff"], nested: { deep: null, n: 1.25 } },
      skills: { default: "on", off: ["old"] },
      zeta: [1, { a: "b" }, true],
      sandbox: "auto",
    };
    writeFileSync(target.file, JSON.stringify(original));
    await updateSettings(target, (current) => patchSkills(current, { on: ["old", "new"] }));
    const after = JSON.parse(readFileSync(target.file, "utf8")) as Record<string, unknown>;
    expect(after).toEqual({ ...original, skills: { default: "on", on: ["old", "new"] } });
    expect(Object.keys(after)).toEqual(["theme", "skills", "zeta", "sandbox"]);
  });

  it("refuses a stale expectedRevision with a conflict carrying the current revision; the file is untouched", async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    const first = await updateSettings(target, withDemoOn);
    const second = await updateSettings(target, (current) => ({ ...current, network: true }), { expectedRevision: first.revision });
    const bytes = readFileSync(target.file, "utf8");
    const error = await failure(updateSettings(target, (current) => ({ ...current, network: false }), { expectedRevision: first.revision }));
    expect(isAppError(error, "conflict")).toBe(true);
    expect(isAppError(error) && error.data?.currentRevision).toBe(second.revision);
    expect(readFileSync(target.file, "utf8")).toBe(bytes);
  });

  it("refuses expectedRevision 'absent' once the file exists", async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    await updateSettings(target, withDemoOn);
    expect(isAppError(await failure(updateSettings(target, withDemoOn, { expectedRevision: ABSENT_REVISION })), "conflict")).toBe(true);
  });

  it("refuses a mutation whose result breaks the schema and writes nothing", async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    writeFileSync(target.file, '{"skills":{"on":["demo"]}}');
    const bytes = readFileSync(target.file, "utf8");
    const error = await failure(updateSettings(target, (current) => ({ ...current, skills: { on: ["demo"], off: ["demo"] } })));
    expect(isAppError(error, "invalid_params")).toBe(true);
    const project = projectSettingsTarget(temps.make(), state);
    expect(isAppError(await failure(updateSettings(project, () => ({ skills: { default: "off" } }))), "invalid_params")).toBe(true);
    expect(readFileSync(target.file, "utf8")).toBe(bytes);
    expect(readdirSync(state).sort()).toEqual(["settings.json", SETTINGS_LOCK_FILE]);
  });

  it("does not rewrite a file the mutation leaves unchanged", async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    const first = await updateSettings(target, withDemoOn);
    const before = statSync(target.file).ino;
    const again = await updateSettings(target, withDemoOn);
    expect(again.revision).toBe(first.revision);
    expect(statSync(target.file).ino).toBe(before);
  });

  it("serialises concurrent updates inside one process: none is lost", async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    const bump = (current: Settings): Settings => ({ ...current, counter: (typeof current.counter === "number" ? current.counter : 0) + 1 });
    await Promise.all(Array.from({ length: 20 }, () => updateSettings(target, bump)));
    expect((await readSettings(target)).settings.counter).toBe(20);
  });
});

describe("D-4 patchSkills", () => {
  it("moves a name between on and off, and clear removes it from both", () => {
    const start: Settings = { network: true, skills: { default: "off", on: ["a", "b"], off: ["c"] } };
    expect(patchSkills(start, { off: ["a"], on: ["c"] })).toEqual({ network: true, skills: { default: "off", on: ["b", "c"], off: ["a"] } });
    expect(patchSkills(start, { clear: ["a", "c"] })).toEqual({ network: true, skills: { default: "off", on: ["b"] } });
    expect(patchSkills({}, { off: ["x"] })).toEqual({ skills: { off: ["x"] } });
    expect(start.skills?.on).toEqual(["a", "b"]);
  });

  it("leaves no emptied list behind, nor a skills section with nothing in it", () => {
    expect(patchSkills({ network: true, skills: { on: ["a"] } }, { clear: ["a"] })).toEqual({ network: true });
    expect(patchSkills({ skills: { on: ["a"], off: [] } }, { off: ["a"] })).toEqual({ skills: { off: ["a"] } });
    expect(patchSkills({ skills: { default: "off", off: ["a"] } }, { clear: ["a"] })).toEqual({ skills: { default: "off" } });
    expect(patchSkills({}, { clear: ["a"] })).toEqual({});
  });

  it("refuses a name in two parts of one patch, and invalid names", () => {
    expect(() => patchSkills({}, { on: ["a"], off: ["a"] })).toThrow(/both on and off/);
    expect(() => patchSkills({}, { clear: [""] })).toThrow(/empty/);
  });
});
