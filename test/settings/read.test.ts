import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isAppError } from "../../src/errors/index.js";
import {
  ABSENT_REVISION,
  globalSettingsTarget,
  MAX_SETTINGS_BYTES,
  MAX_SETTINGS_DEPTH,
  MAX_SESSIONS_LIMIT,
  MAX_SETTINGS_SKILL_NAME_LENGTH,
  projectSettingsTarget,
  readSettings,
  readSettingsFile,
  SettingsFileError,
  settingsRevision,
  updateSettings,
  validateSettings,
} from "../../src/settings/index.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-settings-read-");
afterEach(() => temps.cleanup());

/** Writes `text` as the global settings file of a fresh state dir; returns the state dir. */
function stateWith(text: string | Buffer): string {
  const state = temps.make();
  writeFileSync(join(state, "settings.json"), text);
  return state;
}

async function readFailure(state: string): Promise<SettingsFileError> {
  const error: unknown = await readSettings(globalSettingsTarget(state)).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SettingsFileError);
  return error as SettingsFileError;
}

describe("D-4 reading settings files", () => {
  it("takes a missing file, or a missing .albedo directory, as empty settings with revision 'absent'", async () => {
    const state = temps.make();
    expect(await readSettings(globalSettingsTarget(state))).toEqual({ settings: {}, revision: ABSENT_REVISION, text: "" });
    const project = await readSettings(projectSettingsTarget(join(state, "no-such-workspace"), state));
    expect(project.revision).toBe(ABSENT_REVISION);
  });

  it("reads a valid file; its revision is the sha256 of its bytes", async () => {
    const text = '{"skills":{"default":"off","on":["demo"]},"sandbox":"required","kernel":{"pool":2},"network":false}';
    const snapshot = await readSettings(globalSettingsTarget(stateWith(text)));
    expect(snapshot.settings.skills).toEqual({ default: "off", on: ["demo"] });
    expect(snapshot.revision).toBe(settingsRevision(Buffer.from(text)));
    expect(snapshot.revision).toMatch(/^[0-9a-f]{64}$/);
  });

  it("fails on malformed JSON, naming the file, and never treats it as empty", async () => {
    const state = stateWith('{"skills": {"on": ["a",]}');
    const error = await readFailure(state);
    expect(error.fault).toBe("malformed_json");
    expect(error.file).toBe(join(state, "settings.json"));
    expect(error.message).toContain(join(state, "settings.json"));
  });

  it("fails on an empty file and on bytes that are not UTF-8", async () => {
    expect((await readFailure(stateWith(""))).fault).toBe("malformed_json");
    expect((await readFailure(stateWith(Buffer.from([0x7b, 0xff, 0x7d])))).fault).toBe("malformed_json");
  });

  it("fails on wrong types, reporting every problem with its path", async () => {
    const state = stateWith(
      JSON.stringify({
        skills: { on: "demo", off: [3] },
        sandbox: "maybe",
        kernel: { pool: 9, python: "" },
        limits: { memoryMB: 1.5, processes: 0 },
        network: "yes",
      }),
    );
    const error = await readFailure(state);
    expect(error.fault).toBe("invalid");
    expect(error.problems.map((problem) => problem.path).sort()).toEqual(
      ["kernel.pool", "kernel.python", "limits.memoryMB", "limits.processes", "network", "sandbox", "skills.off[0]", "skills.on"].sort(),
    );
  });

  it("rejects unknown fields inside known sections but keeps unknown top-level fields", async () => {
    const bad = await readFailure(stateWith('{"skills":{"enabled":["demo"]},"kernel":{"pools":1}}'));
    expect(bad.problems.map((problem) => problem.path)).toEqual(["skills.enabled", "kernel.pools"]);
    const good = await readSettings(globalSettingsTarget(stateWith('{"theme":{"dark":true},"skills":{}}')));
    expect(good.settings.theme).toEqual({ dark: true });
  });

  it("allows skills.default only in the global scope", async () => {
    const workspace = temps.make();
    mkdirSync(join(workspace, ".albedo"));
    writeFileSync(join(workspace, ".albedo", "settings.json"), '{"skills":{"default":"off"}}');
    const error: unknown = await readSettings(projectSettingsTarget(workspace, temps.make())).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SettingsFileError);
    expect((error as SettingsFileError).problems[0]?.path).toBe("skills.default");
    expect(validateSettings({ skills: { default: "off" } }, "session").ok).toBe(false);
    expect(validateSettings({ skills: { default: "off" } }, "global").ok).toBe(true);
  });

  it("rejects a name listed in both on and off of one scope, empty names and over-long names", () => {
    const both = validateSettings({ skills: { on: ["a", "b"], off: ["b"] } }, "project");
    expect(both).toEqual({ ok: false, problems: [{ path: "skills.on[1]", message: expect.stringContaining('"b"') }] });
    const long = "n".repeat(MAX_SETTINGS_SKILL_NAME_LENGTH + 1);
    expect(validateSettings({ skills: { on: ["n".repeat(MAX_SETTINGS_SKILL_NAME_LENGTH)] } }, "project").ok).toBe(true);
    const bad = validateSettings({ skills: { on: ["", long] } }, "project");
    expect(bad.ok ? [] : bad.problems.map((problem) => problem.path)).toEqual(["skills.on[0]", "skills.on[1]"]);
  });

  it("accepts a file of exactly MAX_SETTINGS_BYTES and fails one byte over", async () => {
    const body = '{"skills":{}}';
    const exact = body + " ".repeat(MAX_SETTINGS_BYTES - body.length);
    expect((await readSettings(globalSettingsTarget(stateWith(exact)))).settings).toEqual({ skills: {} });
    const error = await readFailure(stateWith(exact + " "));
    expect(error.fault).toBe("oversize");
    expect(error.message).toContain("MAX_SETTINGS_BYTES");
  });

  it("fails on a directory or a FIFO at the path without blocking", async () => {
    const dirState = temps.make();
    mkdirSync(join(dirState, "settings.json"));
    expect((await readFailure(dirState)).fault).toBe("not_regular_file");
    const fifoState = temps.make();
    execFileSync("mkfifo", [join(fifoState, "settings.json")]);
    expect((await readFailure(fifoState)).fault).toBe("not_regular_file");
  });

  it("follows a symlink to a regular file", async () => {
    const state = temps.make();
    const real = join(temps.make(), "real.json");
    writeFileSync(real, '{"network":true}');
    execFileSync("ln", ["-s", real, join(state, "settings.json")]);
    expect((await readSettingsFile(join(state, "settings.json"), "global")).settings).toEqual({ network: true });
  });

  it("fails an update on a malformed file and leaves its bytes untouched", async () => {
    const text = '{"skills": {"on": ["demo"], "default": "maybe"}}';
    const state = stateWith(text);
    const error: unknown = await updateSettings(globalSettingsTarget(state), (current) => ({ ...current, network: true })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SettingsFileError);
    expect(isAppError(error)).toBe(false);
    expect(readFileSync(join(state, "settings.json"), "utf8")).toBe(text);
  });
});

/** Settings JSON whose top-level object holds `depth - 1` nested lists: `depth` levels in all. */
function nestedSettings(depth: number): string {
  return `{"theme": ${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
}

/** Nesting far past the bound: deep enough to overflow JSON.stringify and structuredClone. */
const HOSTILE_DEPTH = 20_000;

describe("D-1 daemon.max_sessions is a bounded setting", () => {
  it("accepts 1 to MAX_SESSIONS_LIMIT and refuses anything else, naming the field", () => {
    for (const value of [1, 16, MAX_SESSIONS_LIMIT]) expect(validateSettings({ daemon: { max_sessions: value } }, "global").ok).toBe(true);
    for (const value of [0, MAX_SESSIONS_LIMIT + 1, 2.5, "16", null]) {
      const checked = validateSettings({ daemon: { max_sessions: value } }, "global");
      expect(checked).toEqual({ ok: false, problems: [{ path: "daemon.max_sessions", message: expect.stringContaining(`1 to ${MAX_SESSIONS_LIMIT}`) }] });
    }
    const typo = validateSettings({ daemon: { max_session: 4 } }, "global");
    expect(typo.ok ? [] : typo.problems.map((problem) => problem.path)).toEqual(["daemon.max_session"]);
  });
});

describe("D-4 B settings nesting depth is bounded (MAX_SETTINGS_DEPTH)", () => {
  it("reads a file exactly MAX_SETTINGS_DEPTH deep and fails one level deeper, naming the file and the bound", async () => {
    const snapshot = await readSettings(globalSettingsTarget(stateWith(nestedSettings(MAX_SETTINGS_DEPTH))));
    expect(snapshot.settings.theme).toBeInstanceOf(Array);
    const state = stateWith(nestedSettings(MAX_SETTINGS_DEPTH + 1));
    const error = await readFailure(state);
    expect(error.fault).toBe("too_deep");
    expect(error.message).toContain(join(state, "settings.json"));
    expect(error.message).toContain("MAX_SETTINGS_DEPTH");
  });

  it(`fails on a file nested ${HOSTILE_DEPTH} deep (never read as empty, never a stack overflow)`, async () => {
    const error = await readFailure(stateWith(nestedSettings(HOSTILE_DEPTH)));
    expect(error.fault).toBe("too_deep");
  });

  it("refuses a session-scope value past the bound as a problem, not a throw", () => {
    const deep = JSON.parse(nestedSettings(HOSTILE_DEPTH)) as unknown;
    expect(validateSettings(deep, "session")).toEqual({ ok: false, problems: [{ path: "", message: expect.stringContaining("MAX_SETTINGS_DEPTH") }] });
  });

  it("refuses to write settings past the bound (limit_exceeded) and leaves the file untouched", async () => {
    const text = '{"network": true}';
    const state = stateWith(text);
    const deep = JSON.parse(nestedSettings(HOSTILE_DEPTH)) as { theme: unknown };
    const error: unknown = await updateSettings(globalSettingsTarget(state), (current) => ({ ...current, theme: deep.theme })).catch((caught: unknown) => caught);
    expect(isAppError(error, "limit_exceeded")).toBe(true);
    expect((error as Error).message).toContain("MAX_SETTINGS_DEPTH");
    expect(readFileSync(join(state, "settings.json"), "utf8")).toBe(text);
  });
});
