import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, makeDirs, type Dirs } from "./support/daemon.js";
import { startInProcess, type InProcessDaemon } from "./support/inProcess.js";
import { writeSkill } from "../support/skills.js";

let dirs: Dirs;
let daemon: InProcessDaemon;
let sessionId: string;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = any;

beforeAll(async () => {
  dirs = await makeDirs();
  const albedoRoot = join(dirs.workspace, ".albedo", "skills");
  const agentsRoot = join(dirs.workspace, ".agents", "skills");
  writeSkill(albedoRoot, "dup", { body: "winner body\n" });
  writeSkill(agentsRoot, "dup", { body: "loser body\n" });
  writeSkill(join(dirs.home, ".agents", "skills"), "dup", { body: "user body\n" });
  writeSkill(agentsRoot, "demo");
  await mkdir(join(agentsRoot, "broken"));
  await writeFile(join(agentsRoot, "broken", "SKILL.md"), "---\nname: other\n---\nno description\n");
  await writeFile(join(dirs.workspace, "AGENTS.md"), "Be brief.\n");
  daemon = await startInProcess(dirs);
  sessionId = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id;
});

afterAll(async () => {
  await daemon?.close();
  await dirs?.cleanup();
});

const catalog = async () => (await call(daemon, "GET", `/sessions/${sessionId}/catalog`)).body;
const rowsNamed = (body: { skills: Row[] }, name: string) => body.skills.filter((row: Row) => row.name === name);

describe("D-3 management catalog", () => {
  it("lists valid, invalid and shadowed candidates with stable ids, sources, preferences and diagnostics", async () => {
    const res = await call(daemon, "GET", `/sessions/${sessionId}/catalog`);
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe(`"${res.body.revision}"`);
    const dups = rowsNamed(res.body, "dup");
    expect(dups.map((row: Row) => [row.scope, row.status])).toEqual([["workspace", "valid"], ["workspace", "shadowed"], ["user", "shadowed"]]);
    const winner = dups[0];
    expect(winner).toMatchObject({
      preference_key: "dup",
      source: join(dirs.workspace, ".albedo", "skills", "dup", "SKILL.md"),
      resolved_source: join(dirs.workspace, ".albedo", "skills", "dup", "SKILL.md"),
      global_preference: null,
      project_preference: null,
      session_override: null,
      effective: { enabled: true, decided_by: "default" },
      shadowed_by: null,
    });
    expect(winner.id).toMatch(/^[0-9a-f]{16}$/);
    expect(dups[1]).toMatchObject({ shadowed_by: winner.source, effective: { enabled: false, decided_by: "shadowed" } });
    expect(dups[1].diagnostics.map((d: Row) => d.code)).toContain("collision");
    const broken = res.body.skills.find((row: Row) => row.source.includes("/broken/"));
    expect(broken).toMatchObject({ status: "invalid", effective: { enabled: false, decided_by: "invalid" } });
    expect(broken.diagnostics.length).toBeGreaterThan(0);
    expect(res.body.instructions).toEqual([expect.objectContaining({ scope: "workspace", path: join(dirs.workspace, "AGENTS.md"), size: 10, truncated: false })]);
    const again = await catalog();
    expect(again.revision).toBe(res.body.revision);
    expect(again.skills.map((row: Row) => row.id)).toEqual(res.body.skills.map((row: Row) => row.id));
  });

  it("changes its revision with instruction content but never reloads the session", async () => {
    const before = await catalog();
    const sessionBefore = (await call(daemon, "GET", `/sessions/${sessionId}`)).body.revision;
    await writeFile(join(dirs.workspace, "AGENTS.md"), "Be brief, always.\n");
    const after = await catalog();
    expect(after.revision).not.toBe(before.revision);
    expect(after.needs_reload).toBe(true);
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).body.revision).toBe(sessionBefore);
  });

  it("PATCH needs If-Match: 428 without, 409 catalog_changed when stale; a disabled winner exposes no duplicate", async () => {
    const current = await catalog();
    const missing = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { off: ["dup"] });
    expect(missing.body).toMatchObject({ status: 428, code: "precondition_required" });
    const stale = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { off: ["dup"] }, { "if-match": '"0000"' });
    expect(stale.body).toMatchObject({ status: 409, code: "catalog_changed", current_revision: current.revision });
    const stray = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { off: ["dup"], disable: ["x"] }, { "if-match": `"${current.revision}"` });
    expect(stray.body).toMatchObject({ status: 400, code: "invalid_body" });
    const both = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { off: ["dup"], on: ["dup"] }, { "if-match": `"${current.revision}"` });
    expect(both.body).toMatchObject({ status: 400, code: "invalid_params" });

    const patched = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { off: ["dup"] }, { "if-match": `"${current.revision}"` });
    expect(patched.status).toBe(200);
    expect(patched.body.revision).not.toBe(current.revision);
    expect(patched.headers.get("etag")).toBe(`"${patched.body.revision}"`);
    const dups = rowsNamed(patched.body, "dup");
    expect(dups[0]).toMatchObject({ status: "valid", session_override: "off", effective: { enabled: false, decided_by: "session" } });
    expect(dups.slice(1).every((row: Row) => row.status === "shadowed" && row.effective.enabled === false)).toBe(true);
    const session = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(session.selection.effective.dup).toEqual({ enabled: false, decided_by: "session" });
    expect(session.commands.map((c: Row) => c.name)).not.toContain("/dup");
    expect((await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { off: ["dup"] }, { "if-match": `"${current.revision}"` })).status).toBe(409);
    const cleared = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { clear: ["dup"] }, { "if-match": patched.headers.get("etag")! });
    expect(rowsNamed(cleared.body, "dup")[0]).toMatchObject({ session_override: null, effective: { enabled: true } });
  });
});

describe("D-4 preferences through /settings", () => {
  it("GET /settings returns each scope with its revision", async () => {
    const res = await call(daemon, "GET", `/settings?workspace=${encodeURIComponent(dirs.workspace)}`);
    expect(res.body).toEqual({
      global: { scope: "global", file: join(dirs.state, "settings.json"), revision: "absent", settings: {} },
      project: { scope: "project", file: join(dirs.workspace, ".albedo", "settings.json"), revision: "absent", settings: {} },
    });
  });

  it("PATCH /settings writes atomically (0600), keeps unrelated fields, and live sessions see it; narrowest scope wins", async () => {
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ custom: { keep: 1 }, network: false }));
    const global = (await call(daemon, "GET", "/settings")).body.global;
    expect(global.settings).toEqual({ custom: { keep: 1 }, network: false });
    const missing = await call(daemon, "PATCH", "/settings", { scope: "global", skills: { off: ["demo"] } });
    expect(missing.body).toMatchObject({ status: 428, code: "precondition_required" });
    const stale = await call(daemon, "PATCH", "/settings", { scope: "global", skills: { off: ["demo"] } }, { "if-match": '"absent"' });
    expect(stale.body).toMatchObject({ status: 409, code: "catalog_changed", current_revision: global.revision });

    const written = await call(daemon, "PATCH", "/settings", { scope: "global", skills: { off: ["demo"], default: "on" } }, { "if-match": `"${global.revision}"` });
    expect(written.status).toBe(200);
    expect(written.headers.get("etag")).toBe(`"${written.body.revision}"`);
    const onDisk = JSON.parse(readFileSync(join(dirs.state, "settings.json"), "utf8"));
    expect(onDisk).toEqual({ custom: { keep: 1 }, network: false, skills: { off: ["demo"], default: "on" } });
    expect(statSync(join(dirs.state, "settings.json")).mode & 0o777).toBe(0o600);
    let session = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(session.selection.effective.demo).toEqual({ enabled: false, decided_by: "global" });

    const project = (await call(daemon, "GET", `/settings?workspace=${encodeURIComponent(dirs.workspace)}`)).body.project;
    const onInProject = await call(daemon, "PATCH", "/settings", { scope: "project", workspace: dirs.workspace, skills: { on: ["demo"] } }, { "if-match": `"${project.revision}"` });
    expect(onInProject.status).toBe(200);
    session = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(session.selection.effective.demo).toEqual({ enabled: true, decided_by: "project" });
    const row = rowsNamed(await catalog(), "demo")[0];
    expect(row).toMatchObject({ global_preference: "off", project_preference: "on", session_override: null, effective: { enabled: true, decided_by: "project" } });
  });

  it("skills.clear returns a switch to not set in each scope: the name leaves the file's lists, and no emptied list or section stays", async () => {
    const project = (await call(daemon, "GET", `/settings?workspace=${encodeURIComponent(dirs.workspace)}`)).body.project;
    expect(project.settings).toEqual({ skills: { on: ["demo"] } });
    const cleared = await call(daemon, "PATCH", "/settings", { scope: "project", workspace: dirs.workspace, skills: { clear: ["demo"] } }, { "if-match": `"${project.revision}"` });
    expect(cleared.status).toBe(200);
    expect(JSON.parse(readFileSync(join(dirs.workspace, ".albedo", "settings.json"), "utf8"))).toEqual({});
    expect(rowsNamed(await catalog(), "demo")[0]).toMatchObject({ project_preference: null, effective: { enabled: false, decided_by: "global" } });
    const current = await catalog();
    const on = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { on: ["demo"] }, { "if-match": `"${current.revision}"` });
    const back = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { clear: ["demo"] }, { "if-match": on.headers.get("etag")! });
    expect(rowsNamed(back.body, "demo")[0]).toMatchObject({ session_override: null, effective: { enabled: false, decided_by: "global" } });
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).body.selection.scopes.session?.skills?.on).toBeUndefined();
  });

  it("validates PATCH bodies before touching a file", async () => {
    const global = (await call(daemon, "GET", "/settings")).body.global;
    const ifMatch = { "if-match": `"${global.revision}"` };
    const cases: [unknown, string][] = [
      [{ scope: "global", skills: { enable: ["x"] } }, "invalid_body"],
      [{ scope: "galaxy" }, "invalid_body"],
      [{ scope: "project" }, "invalid_body"],
      [{ scope: "global", workspace: dirs.workspace }, "invalid_body"],
      [{ scope: "project", workspace: dirs.workspace, skills: { default: "off" } }, "invalid_body"],
      [{ scope: "global", sandbox: "sometimes" }, "invalid_body"],
      [{ scope: "global", skills: { on: [""] } }, "invalid_body"],
      [{ scope: "global", skills: { on: ["x"], off: ["x"] } }, "invalid_params"],
    ];
    for (const [body, code] of cases) expect((await call(daemon, "PATCH", "/settings", body, ifMatch)).body.code).toBe(code);
    expect((await call(daemon, "GET", "/settings")).body.global.revision).toBe(global.revision);
  });

  it("a project write that would set a global-only key is refused naming it; one the file already holds, or its removal, passes", async () => {
    const file = join(dirs.workspace, ".albedo", "settings.json");
    const patch = async (body: object) => {
      const project = (await call(daemon, "GET", `/settings?workspace=${encodeURIComponent(dirs.workspace)}`)).body.project;
      return call(daemon, "PATCH", "/settings", { scope: "project", workspace: dirs.workspace, ...body }, { "if-match": `"${project.revision}"` });
    };
    await rm(file, { force: true });
    for (const [body, path] of [[{ sandbox: "off" }, "sandbox"], [{ network: true }, "network"], [{ kernel: { pool: 0 } }, "kernel"], [{ limits: { processes: 64 } }, "limits"], [{ daemon: { max_sessions: 2 } }, "daemon"], [{ model: { provider: "stub", name: "x" } }, "model.provider"]] as const) {
      const refused = await patch(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toMatchObject({ code: "invalid_params", problems: [{ path, message: expect.stringContaining(`${path} is read from the global settings only, so the project scope cannot set it`) }] });
    }
    expect(existsSync(file)).toBe(false);
    // A file written by hand keeps what it holds (ignored, not refused on read); a write of another key passes, and removal too.
    await writeFile(file, JSON.stringify({ sandbox: "off", model: { provider: "stub" } }));
    expect((await patch({ model: { provider: "stub", name: "qwen" } })).status).toBe(200);
    expect((await patch({ sandbox: null })).status).toBe(200);
    const kept = JSON.parse(readFileSync(file, "utf8"));
    expect(kept).toMatchObject({ model: { provider: "stub", name: "qwen" } });
    expect(kept.sandbox).toBeUndefined();
    await rm(file);
  });

  it("a malformed settings file fails the request with 422 naming the file, and is left untouched", async () => {
    const file = join(dirs.workspace, ".albedo", "settings.json");
    const broken = '{"skills": {"on": [';
    await writeFile(file, broken);
    const read = await call(daemon, "GET", `/sessions/${sessionId}`);
    expect(read.status).toBe(422);
    expect(read.body).toMatchObject({ code: "settings_file_invalid", file, fault: "malformed_json" });
    expect(read.body.detail).toContain(file);
    const write = await call(daemon, "PATCH", "/settings", { scope: "project", workspace: dirs.workspace, skills: { off: ["demo"] } }, { "if-match": '"whatever"' });
    expect(write.body).toMatchObject({ status: 422, code: "settings_file_invalid", file });
    expect(readFileSync(file, "utf8")).toBe(broken);
    await writeFile(file, "{}");
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).status).toBe(200);
  });
});

describe("D-2 when the session resource walks files", () => {
  it("rereads settings on every GET but walks skill files only on a catalog read or a reload", async () => {
    const before = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    writeSkill(join(dirs.workspace, ".agents", "skills"), "later");
    const unwalked = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(unwalked.revision).toBe(before.revision);
    expect(unwalked.selection.effective.later).toBeUndefined();

    const projectFile = join(dirs.workspace, ".albedo", "settings.json");
    await writeFile(projectFile, JSON.stringify({ skills: { off: ["demo"] } }));
    const reread = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(reread.selection.effective.demo).toEqual({ enabled: false, decided_by: "project" });
    expect(reread.commands.map((c: Row) => c.name)).not.toContain("/demo");
    // The settings changed, so that read walked the files too and saw the new skill.
    expect(reread.needs_reload).toBe(true);
    await rm(projectFile);

    const catalog = (await call(daemon, "GET", `/sessions/${sessionId}/catalog`)).body;
    expect(catalog.skills.map((row: Row) => row.name)).toContain("later");
    expect(catalog.needs_reload).toBe(true);

    const reloaded = await call(daemon, "POST", `/sessions/${sessionId}/reload`);
    expect(reloaded.body).toMatchObject({ added: ["later"], removed: [], previous_revision: before.revision });
    const fresh = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(fresh).toMatchObject({ needs_reload: false, revision: reloaded.body.revision, selection: { effective: { later: { enabled: true } } } });
  });
});
