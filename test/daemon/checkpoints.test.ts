import { describe, expect, it } from "vitest";
import { call, killDaemon } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";

const fixture = daemonFixture({ signal: "SIGKILL" });

/** Runs `code` over HTTP and answers its stdout. */
async function stdout(daemon: Parameters<typeof call>[0], id: string, code: string): Promise<string> {
  const res = await call(daemon, "POST", `/sessions/${id}/execute`, { code });
  expect(res.status).toBe(200);
  return (res.body.outputs as { msg_type: string; content: { name?: string; text?: string } }[])
    .filter((output) => output.msg_type === "stream" && output.content.name === "stdout").map((output) => output.content.text).join("");
}

describe("K-15 restart with restore and resume over HTTP", () => {
  it("POST /sessions/{id}/restart {restore} brings the names back and the session resource says so; after a daemon kill -9 the session is resumed with POST /sessions {resume}", { timeout: 180_000 }, async () => {
    const { dirs } = fixture;
    const first = await fixture.start();
    const session = (await call(first, "POST", "/sessions", { workspace: dirs.workspace })).body;
    expect(session.kernel).toMatchObject({ checkpoints: true, restore: null });
    await stdout(first, session.id, "x = 5\ndef double(v): return 2 * v");
    const restarted = await call(first, "POST", `/sessions/${session.id}/restart`, { restore: true });
    expect(restarted.status).toBe(200);
    expect(restarted.body.restore).toMatchObject({ trigger: "restart", restored: ["double", "x"], lost: [], summary: "restored 2 of 2 names" });
    const read = (await call(first, "GET", `/sessions/${session.id}`)).body;
    expect(read.kernel.restore.summary).toBe("restored 2 of 2 names");
    expect(await stdout(first, session.id, "print(double(x))\ny = 'kept'")).toBe("10\n");
    const plain = await call(first, "POST", `/sessions/${session.id}/restart`, {});
    expect(plain.body).toEqual({ restore: null });
    expect(await stdout(first, session.id, "print('x' in globals())\nz = [1, 2]")).toBe("False\n");
    await stdout(first, session.id, "pass");
    const pid = (await call(first, "GET", `/sessions/${session.id}`)).body.kernel.pid as number;

    await killDaemon(first, "SIGKILL");
    if (alive(pid)) process.kill(pid, "SIGKILL");
    await poll(() => !alive(pid), { what: "the old kernel to be gone" });
    const second = await fixture.start();
    const refused = await call(second, "POST", "/sessions", { workspace: dirs.root, resume: session.id });
    expect(refused.status).toBe(400);
    const resumed = await call(second, "POST", "/sessions", { workspace: dirs.workspace, resume: session.id });
    expect(resumed.status).toBe(201);
    expect(resumed.body.kernel.restore).toMatchObject({ trigger: "resume", restored: ["z"] });
    expect(await stdout(second, resumed.body.id, "print(z)")).toBe("[1, 2]\n");
    const missing = await call(second, "POST", "/sessions", { workspace: dirs.workspace, resume: "0123456789ab" });
    expect(missing.status).toBe(404);
  });
});
