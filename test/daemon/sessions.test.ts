import { statSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe("D-1 daemon: files and token", () => {
  it("writes daemon.json {url, pid, start_time} and a 0600 token; every route needs the token", async () => {
    const info = JSON.parse(readFileSync(join(dirs.state, "daemon.json"), "utf8"));
    expect(info).toEqual({ url: daemon.url, pid: daemon.process.pid, start_time: expect.stringMatching(/^\d+$/) });
    expect(statSync(join(dirs.state, "daemon.token")).mode & 0o777).toBe(0o600);
    expect(daemon.token).toMatch(/^[0-9a-f]{64}$/);
    for (const authorization of [undefined, "Bearer wrong", `Basic ${daemon.token}`, `Bearer ${daemon.token}x`]) {
      const res = await fetch(`${daemon.url}/sessions/${sessionId}`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: "unauthorized" });
    }
    expect((await fetch(`${daemon.url}/health?token=${daemon.token}`)).status).toBe(401);
  });
});

describe("D-2 sessions", () => {
  it("POST /sessions returns 201 with the session resource; GET /sessions lists it", async () => {
    const resource = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(resource.kernel).toEqual({ status: expect.stringMatching(/^(ready|idle)$/), pid: expect.any(Number), sandbox: expect.any(String), sandbox_notes: expect.any(Array), warm: expect.any(Boolean) });
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
    expect(list.sessions.find((s: { id: string }) => s.id === sessionId)).toEqual({ ...resource, kernel: { ...resource.kernel, status: expect.any(String) } });
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
        await waitFor(() => stream.events.some((e) => e.type === "status" && (e.kernel as { status: string }).status === "busy"), "a busy status");
      }
      const failed = await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code: "1/0" });
      expect(failed.body.status).toBe("error");
      expect(failed.body.outputs[0]).toMatchObject({ msg_type: "error", content: { ename: "ZeroDivisionError" } });
      // IPython colours its tracebacks; over HTTP they come without terminal escapes.
      expect(failed.body.outputs[0].content.traceback.join("\n")).toContain("ZeroDivisionError");
      expect(JSON.stringify(failed.body)).not.toContain("\\u001b");
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

  it("a settings write reaches the live session at once", async () => {
    const global = (await call(daemon, "GET", "/settings")).body.global;
    const written = await call(daemon, "PATCH", "/settings", { scope: "global", skills: { off: ["demo"] } }, { "if-match": `"${global.revision}"` });
    expect(written.status).toBe(200);
    expect(written.body).toEqual({ scope: "global", file: join(dirs.state, "settings.json"), revision: written.headers.get("etag")!.replaceAll('"', ""), settings: { skills: { off: ["demo"] } } });
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).body.selection.effective.demo).toEqual({ enabled: false, decided_by: "global" });
    const cleared = await call(daemon, "PATCH", "/settings", { scope: "global", skills: { clear: ["demo"] } }, { "if-match": written.headers.get("etag")! });
    expect(cleared.status).toBe(200);
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).body.selection.effective.demo).toEqual({ enabled: true, decided_by: "default" });
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
