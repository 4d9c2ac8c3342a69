import { statSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_REQUEST_BODY_BYTES } from "../../src/daemon/index.js";
import { alive, call, killDaemon, makeDirs, openStream, startDaemon, waitFor, writeSkill, type DaemonProcess, type Dirs } from "./support/daemon.js";

let dirs: Dirs;
let daemon: DaemonProcess;
let sessionId: string;

beforeAll(async () => {
  dirs = await makeDirs();
  await writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
  daemon = await startDaemon(dirs);
  const created = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
  expect(created.status).toBe(201);
  sessionId = created.body.id;
}, 120_000);

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
});

describe("D-1 daemon: files, token, problems", () => {
  it("writes daemon.json {url, pid, start_time} and a 0600 token", () => {
    const info = JSON.parse(readFileSync(join(dirs.state, "daemon.json"), "utf8"));
    expect(info).toEqual({ url: daemon.url, pid: daemon.process.pid, start_time: expect.stringMatching(/^\d+$/) });
    expect(statSync(join(dirs.state, "daemon.token")).mode & 0o777).toBe(0o600);
    expect(daemon.token).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses every route without the right bearer token (401 problem)", async () => {
    for (const [method, path] of [["GET", "/health"], ["GET", "/sessions"], ["GET", `/sessions/${sessionId}`], ["POST", "/sessions"], ["GET", "/settings"], ["GET", "/nowhere"]] as const) {
      for (const authorization of [undefined, "Bearer wrong", `Basic ${daemon.token}`, `Bearer ${daemon.token}x`]) {
        const res = await fetch(daemon.url + path, { method, headers: authorization ? { authorization } : {} });
        expect(res.status).toBe(401);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect(await res.json()).toMatchObject({ status: 401, code: "unauthorized", type: "urn:albedo:problem:unauthorized" });
      }
    }
    const query = await fetch(`${daemon.url}/health?token=${daemon.token}`);
    expect(query.status).toBe(401);
  });

  it("answers unknown routes, wrong methods and bad bodies with stable problem codes", async () => {
    expect((await call(daemon, "GET", "/nowhere")).body).toMatchObject({ status: 404, code: "route_not_found" });
    const wrongMethod = await call(daemon, "PUT", "/sessions");
    expect(wrongMethod.body).toMatchObject({ status: 405, code: "method_not_allowed" });
    expect(wrongMethod.headers.get("allow")).toContain("POST");
    expect((await call(daemon, "POST", "/sessions", "{not json")).body).toMatchObject({ status: 400, code: "invalid_json" });
    const plain = await call(daemon, "POST", "/sessions", "{}", { "content-type": "text/plain" });
    expect(plain.body).toMatchObject({ status: 415, code: "unsupported_media_type" });
    const huge = await call(daemon, "POST", "/sessions", JSON.stringify({ workspace: "x".repeat(MAX_REQUEST_BODY_BYTES) }));
    expect(huge.body).toMatchObject({ status: 413, code: "payload_too_large" });
    const stray = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, kernel: "python3" });
    expect(stray.body).toMatchObject({ status: 400, code: "invalid_body", field: "kernel" });
    expect((await call(daemon, "POST", "/sessions", { workspace: "relative/dir" })).body).toMatchObject({ code: "invalid_body", field: "workspace" });
    expect((await call(daemon, "POST", "/sessions", { workspace: join(dirs.root, "missing") })).body).toMatchObject({ code: "invalid_body" });
    expect((await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, extensions: { skills: "yes" } })).body).toMatchObject({ code: "invalid_body" });
    expect((await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code: "1", silent: true })).body).toMatchObject({ code: "invalid_body", field: "silent" });
    expect((await call(daemon, "GET", "/sessions/nope")).body).toMatchObject({ status: 404, code: "session_not_found" });
  });
});

describe("D-2 sessions", () => {
  it("POST /sessions returns 201 with the session resource; GET /sessions lists it", async () => {
    const resource = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(resource).toMatchObject({
      id: sessionId,
      workspace: dirs.workspace,
      status: "open",
      needs_reload: false,
      selection: { effective: { demo: { enabled: true, decided_by: "default" } } },
      composition: { extensions: { python: { enabled: true, routes: ["commands.catalog", "commands.complete", "commands.invoke", "commands.slash"] }, skills: { enabled: true, routes: ["skills.list", "skills.read", "skills.resources"] } } },
    });
    expect(["ready", "idle"]).toContain(resource.kernel.status);
    expect(alive(resource.kernel.pid)).toBe(true);
    expect(resource.revision).toMatch(/^[0-9a-f]{64}$/);
    expect(resource.commands.map((c: { name: string }) => c.name)).toContain("/demo");
    const list = (await call(daemon, "GET", "/sessions")).body;
    expect(list.sessions.map((s: { id: string }) => s.id)).toContain(sessionId);
  });

  it("executes code, answers with the outputs, and streams them with status changes (header and ?token= auth)", async () => {
    const viaHeader = await openStream(daemon, sessionId, "header");
    const viaQuery = await openStream(daemon, sessionId, "query");
    try {
      const res = await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code: "print('hi')\nx = 6 * 7\nx", execution_id: "run-1" });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ execution_id: "run-1", status: "ok", dropped_outputs: 0 });
      expect(res.body.outputs).toEqual([
        { msg_type: "stream", content: { name: "stdout", text: "hi\n" } },
        expect.objectContaining({ msg_type: "execute_result", content: expect.objectContaining({ data: { "text/plain": "42" } }) }),
      ]);
      for (const stream of [viaHeader, viaQuery]) {
        await waitFor(() => stream.events.filter((e) => e.type === "output").length === 2, "streamed outputs");
        expect(stream.events[0]).toMatchObject({ type: "status", session_id: sessionId });
        expect(stream.events.find((e) => e.type === "output")).toMatchObject({ execution_id: "run-1", msg_type: "stream", content: { text: "hi\n" } });
        await waitFor(() => stream.events.some((e) => e.type === "status" && e.kernel === "busy"), "a busy status");
      }
      const failed = await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code: "1/0" });
      expect(failed.body.status).toBe("error");
      expect(failed.body.outputs[0]).toMatchObject({ msg_type: "error", content: { ename: "ZeroDivisionError" } });
    } finally {
      await viaHeader.close();
      await viaQuery.close();
    }
  });

  it("refuses a stream without the token or for an unknown session", async () => {
    await expect(openStream({ url: daemon.url, token: "wrong" }, sessionId)).rejects.toThrow(/401/);
    await expect(openStream({ url: daemon.url, token: "wrong" }, sessionId, "query")).rejects.toThrow(/401/);
    await expect(openStream(daemon, "nope")).rejects.toThrow(/404/);
  });

  it("rereads settings on every GET but walks skill files only on a catalog read or a reload", async () => {
    const before = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    await writeSkill(join(dirs.workspace, ".agents", "skills"), "later");
    const unwalked = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(unwalked.needs_reload).toBe(false);
    expect(unwalked.revision).toBe(before.revision);

    await mkdir(join(dirs.workspace, ".albedo"), { recursive: true });
    await writeFile(join(dirs.workspace, ".albedo", "settings.json"), JSON.stringify({ skills: { off: ["demo"] } }));
    const reread = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(reread.selection.effective.demo).toEqual({ enabled: false, decided_by: "project" });
    expect(reread.commands.map((c: { name: string }) => c.name)).not.toContain("/demo");
    // The settings changed, so that read walked the files too and saw the new skill.
    expect(reread.needs_reload).toBe(true);
    await rm(join(dirs.workspace, ".albedo", "settings.json"));

    const catalog = (await call(daemon, "GET", `/sessions/${sessionId}/catalog`)).body;
    expect(catalog.skills.map((row: { name: string }) => row.name)).toContain("later");
    expect(catalog.needs_reload).toBe(true);
    const stale = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(stale.needs_reload).toBe(true);
    expect(stale.selection.effective.later).toBeUndefined();

    const reloaded = await call(daemon, "POST", `/sessions/${sessionId}/reload`);
    expect(reloaded.status).toBe(200);
    expect(reloaded.body).toMatchObject({ added: ["later"], removed: [], previous_revision: before.revision });
    const fresh = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(fresh).toMatchObject({ needs_reload: false, revision: reloaded.body.revision, selection: { effective: { later: { enabled: true } } } });
    expect((await call(daemon, "POST", `/sessions/${sessionId}/reload`, { target: "x" })).body).toMatchObject({ code: "invalid_body" });
  });

  it("a session with the skills extension off reports it in its composition; DELETE stops its kernel", async () => {
    const created = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, extensions: { skills: false } });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/sessions/${created.body.id}`);
    expect(created.body.composition.extensions.skills).toMatchObject({ enabled: false, skills: 0, routes: [], commands: 0 });
    expect(created.body.commands.map((c: { name: string }) => c.name)).not.toContain("/demo");
    const pid = created.body.kernel.pid as number;
    const stream = await openStream(daemon, created.body.id);
    expect((await call(daemon, "DELETE", `/sessions/${created.body.id}`)).status).toBe(204);
    expect(alive(pid)).toBe(false);
    await waitFor(() => stream.ws.readyState === stream.ws.CLOSED, "the stream to close");
    expect((await call(daemon, "GET", `/sessions/${created.body.id}`)).status).toBe(404);
    expect((await call(daemon, "DELETE", `/sessions/${created.body.id}`)).status).toBe(404);
  });
});
