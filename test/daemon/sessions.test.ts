import { statSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, openStream } from "./support/daemon.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { daemonProcessSession } from "../support/daemonSession.js";

const shared = daemonProcessSession({ demoSkill: true });

describe("D-1 daemon: files and token", () => {
  it("writes daemon.json {url, pid, start_time} and a 0600 token; every route needs the token", async () => {
    const info = JSON.parse(readFileSync(join(shared.dirs.state, "daemon.json"), "utf8"));
    expect(info).toEqual({ url: shared.daemon.url, pid: shared.daemon.process.pid, start_time: expect.stringMatching(/^\d+$/) });
    expect(statSync(join(shared.dirs.state, "daemon.token")).mode & 0o777).toBe(0o600);
    expect(shared.daemon.token).toMatch(/^[0-9a-f]{64}$/);
    for (const authorization of [undefined, "Bearer wrong", `Basic ${shared.daemon.token}`, `Bearer ${shared.daemon.token}x`]) {
      const res = await fetch(`${shared.daemon.url}/sessions/${shared.sessionId}`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: "unauthorized" });
    }
    expect((await fetch(`${shared.daemon.url}/health?token=${shared.daemon.token}`)).status).toBe(401);
  });
});

describe("D-2 sessions", () => {
  it("POST /sessions returns 201 with the session resource; GET /sessions lists it", async () => {
    const resource = (await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body;
    expect(resource.kernel).toEqual({ status: expect.stringMatching(/^(ready|idle)$/), pid: expect.any(Number), sandbox: expect.any(String), sandbox_notes: expect.any(Array), warm: expect.any(Boolean), checkpoints: expect.any(Boolean), restore: null });
    expect(resource).toMatchObject({
      id: shared.sessionId,
      workspace: shared.dirs.workspace,
      status: "open",
      needs_reload: false,
      selection: { effective: { demo: { enabled: true, decided_by: "default" } } },
      composition: { extensions: { python: { enabled: true, routes: ["commands.catalog", "commands.complete", "commands.invoke", "commands.slash"] }, skills: { enabled: true, routes: ["skills.list", "skills.read", "skills.resources"] } } },
    });
    expect(["ready", "idle"]).toContain(resource.kernel.status);
    expect(alive(resource.kernel.pid)).toBe(true);
    expect(resource.revision).toMatch(/^[0-9a-f]{64}$/);
    expect(resource.commands.map((c: { name: string }) => c.name)).toContain("/demo");
    const list = (await call(shared.daemon, "GET", "/sessions")).body;
    expect(list.sessions.find((s: { id: string }) => s.id === shared.sessionId)).toEqual({ ...resource, kernel: { ...resource.kernel, status: expect.any(String) } });
  });

  it("executes code, answers with the outputs, and streams them with status changes (header and ?token= auth)", async () => {
    const viaHeader = await openStream(shared.daemon, shared.sessionId, "header");
    const viaQuery = await openStream(shared.daemon, shared.sessionId, "query");
    try {
      const res = await call(shared.daemon, "POST", `/sessions/${shared.sessionId}/execute`, { code: "print('hi')\nx = 6 * 7\nx", execution_id: "run-1" });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ execution_id: "run-1", status: "ok", dropped_outputs: 0 });
      expect(res.body.outputs).toEqual([
        { msg_type: "stream", content: { name: "stdout", text: "hi\n" } },
        expect.objectContaining({ msg_type: "execute_result", content: expect.objectContaining({ data: { "text/plain": "42" } }) }),
      ]);
      for (const stream of [viaHeader, viaQuery]) {
        await poll(() => stream.events.filter((e) => e.type === "output").length === 2, { what: "streamed outputs" });
        expect(stream.events[0]).toMatchObject({ type: "status", session_id: shared.sessionId });
        expect(stream.events.find((e) => e.type === "output")).toMatchObject({ execution_id: "run-1", msg_type: "stream", content: { text: "hi\n" } });
        await poll(() => stream.events.some((e) => e.type === "status" && (e.kernel as { status: string }).status === "busy"), { what: "a busy status" });
      }
      const failed = await call(shared.daemon, "POST", `/sessions/${shared.sessionId}/execute`, { code: "1/0" });
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
    await expect(openStream({ url: shared.daemon.url, token: "wrong" }, shared.sessionId)).rejects.toThrow(/401/);
    await expect(openStream({ url: shared.daemon.url, token: "wrong" }, shared.sessionId, "query")).rejects.toThrow(/401/);
    await expect(openStream(shared.daemon, "nope")).rejects.toThrow(/404/);
  });

  it("a settings write reaches the live session at once", async () => {
    const global = (await call(shared.daemon, "GET", "/settings")).body.global;
    const written = await call(shared.daemon, "PATCH", "/settings", { scope: "global", skills: { off: ["demo"] } }, { "if-match": `"${global.revision}"` });
    expect(written.status).toBe(200);
    expect(written.body).toEqual({ scope: "global", file: join(shared.dirs.state, "settings.json"), revision: written.headers.get("etag")!.replaceAll('"', ""), settings: { skills: { off: ["demo"] } } });
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body.selection.effective.demo).toEqual({ enabled: false, decided_by: "global" });
    const cleared = await call(shared.daemon, "PATCH", "/settings", { scope: "global", skills: { clear: ["demo"] } }, { "if-match": written.headers.get("etag")! });
    expect(cleared.status).toBe(200);
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body.selection.effective.demo).toEqual({ enabled: true, decided_by: "default" });
  });

  it("a session with the skills extension off reports it in its composition; DELETE stops its kernel", async () => {
    const created = await call(shared.daemon, "POST", "/sessions", { workspace: shared.dirs.workspace, extensions: { skills: false } });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/sessions/${created.body.id}`);
    expect(created.body.composition.extensions.skills).toMatchObject({ enabled: false, skills: 0, routes: [], commands: 0 });
    expect(created.body.commands.map((c: { name: string }) => c.name)).not.toContain("/demo");
    const pid = created.body.kernel.pid as number;
    const stream = await openStream(shared.daemon, created.body.id);
    expect((await call(shared.daemon, "DELETE", `/sessions/${created.body.id}`)).status).toBe(204);
    expect(alive(pid)).toBe(false);
    await poll(() => stream.ws.readyState === stream.ws.CLOSED, { what: "the stream to close" });
    expect((await call(shared.daemon, "GET", `/sessions/${created.body.id}`)).status).toBe(404);
    expect((await call(shared.daemon, "DELETE", `/sessions/${created.body.id}`)).status).toBe(404);
  });
});
