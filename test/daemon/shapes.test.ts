import { describe, expect, it } from "vitest";
import { call, openStream } from "./support/daemon.js";
import { poll } from "../support/poll.js";
import { inProcessDaemonSession } from "../support/daemonSession.js";

const shared = inProcessDaemonSession({ demoSkill: true });

/** Paths of object keys in `value` that are not snake_case; settings documents hold a file's own keys and are skipped. */
function nonSnakeKeys(value: unknown, path = "", found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item, index) => nonSnakeKeys(item, `${path}[${index}]`, found));
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (!/^[a-z0-9_]+$/.test(key)) found.push(at);
      if (key !== "scopes" && key !== "settings" && key !== "content" && key !== "effective") nonSnakeKeys(item, at, found);
    }
  }
  return found;
}

const ANSI_TRACEBACK = ["\u001b[0;31m---------------------------------------------------------------------------\u001b[0m", "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"];

describe("D-2 one shape per resource", () => {
  it("a session is the same in the 201 of POST /sessions, GET /sessions/{id} and GET /sessions, kernel included", async () => {
    const one = (await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body;
    const listed = (await call(shared.daemon, "GET", "/sessions")).body.sessions.find((session: { id: string }) => session.id === shared.sessionId);
    expect(one).toEqual(shared.created.body);
    expect(listed).toEqual(one);
    expect(one.kernel).toEqual({ status: "idle", pid: 4242, sandbox: "none", sandbox_notes: [], warm: false, checkpoints: false, restore: null });
    expect(one.commands.find((command: { name: string }) => command.name === "/reload")).toEqual({
      name: "/reload",
      description: expect.any(String),
      arguments: [{ name: "target", help: expect.any(String), required: false }],
      callers: ["user", "model"],
      submits_turn: false,
    });
    expect(nonSnakeKeys(one)).toEqual([]);
  });

  it("an external kernel's session adds only `rpc`, the bridge record, to its 201", async () => {
    const answer = await call(shared.daemon, "POST", "/sessions", { workspace: shared.daemon.dirs.workspace, kernel: "external", kernel_pid: process.pid });
    expect(answer.status).toBe(201);
    expect(answer.body.rpc).toEqual({ endpoint: expect.stringMatching(/^ipc:\/\//), token: expect.any(String), deadline_ms: expect.any(Number), max_message_bytes: expect.any(Number), extensions: ["python", "skills"] });
    const { rpc: _rpc, ...session } = answer.body;
    expect((await call(shared.daemon, "GET", `/sessions/${answer.body.id}`)).body).toEqual(session);
    expect((await call(shared.daemon, "DELETE", `/sessions/${answer.body.id}`)).status).toBe(204);
  });

  it("an execute answer and the stream carry the same outputs, tracebacks without terminal escapes", async () => {
    const stream = await openStream(shared.daemon, shared.sessionId);
    try {
      shared.daemon.sessions.kernel.script = () => ({
        outputs: [
          { msg_type: "stream", content: { name: "stdout", text: "hi\n" } },
          { msg_type: "error", content: { ename: "ZeroDivisionError", evalue: "division by zero", traceback: ANSI_TRACEBACK } },
        ],
        reply: { status: "error" },
      });
      const answer = await call(shared.daemon, "POST", `/sessions/${shared.sessionId}/execute`, { code: "1/0", execution_id: "run-1" });
      expect(answer.body).toEqual({
        execution_id: "run-1",
        status: "error",
        execution_count: expect.any(Number),
        outputs: [
          { msg_type: "stream", content: { name: "stdout", text: "hi\n" } },
          { msg_type: "error", content: { ename: "ZeroDivisionError", evalue: "division by zero", traceback: ["---------------------------------------------------------------------------", "ZeroDivisionError: division by zero"] } },
        ],
        dropped_outputs: 0,
        dropped_output_bytes: 0,
        pages: [],
        images: [],
        image_notes: [],
      });
      await poll(() => stream.events.filter((event) => event.type === "output").length === 2, { what: "the outputs on the stream" });
      const streamed = stream.events.filter((event) => event.type === "output");
      expect(streamed.map(({ msg_type, content }) => ({ msg_type, content }))).toEqual(answer.body.outputs);
      expect(streamed[0]).toEqual({ type: "output", session_id: shared.sessionId, execution_id: "run-1", msg_type: "stream", content: { name: "stdout", text: "hi\n" } });
      expect(JSON.stringify(stream.events)).not.toContain("\\u001b");
    } finally {
      await stream.close();
    }
  });

  it("a stream's status message carries the session's kernel resource, as GET /sessions/{id} shows it", async () => {
    const stream = await openStream(shared.daemon, shared.sessionId);
    try {
      await poll(() => stream.events.length > 0, { what: "the first status" });
      const kernel = (await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body.kernel;
      expect(stream.events[0]).toEqual({ type: "status", session_id: shared.sessionId, kernel, reason: null, revision: shared.created.body.revision });
    } finally {
      await stream.close();
    }
  });

  it("reload answers previous_revision; interrupt and DELETE answer 204 with no body", async () => {
    const reloaded = await call(shared.daemon, "POST", `/sessions/${shared.sessionId}/reload`);
    const noMcpChange = { added: [], removed: [], restarted: [], started: [], stopped: [] };
    expect(reloaded.body).toEqual({ revision: shared.created.body.revision, previous_revision: shared.created.body.revision, added: [], removed: [], failed: [], skills: expect.any(Number), mcp: noMcpChange });
    const before = shared.daemon.sessions.kernel.interrupts;
    const interrupted = await call(shared.daemon, "POST", `/sessions/${shared.sessionId}/interrupt`);
    expect([interrupted.status, interrupted.body]).toEqual([204, undefined]);
    expect(shared.daemon.sessions.kernel.interrupts).toBe(before + 1);
  });

  it("health answers in snake_case too", async () => {
    const health = (await call(shared.daemon, "GET", "/health")).body;
    expect(health).toEqual({ ok: true, pid: process.pid, started_at: expect.any(String), sessions: expect.any(Number), spares: [], log: null });
  });
});
