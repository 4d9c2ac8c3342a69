import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call } from "./support/daemon.js";
import { daemonProcessSession } from "../support/daemonSession.js";
import { writeSkill } from "../support/skills.js";

const shared = daemonProcessSession({ demoSkill: true });
/** Upgrade requests reset by the client in the attack test; one is often enough, more make the race certain. */
const ATTACKS = 20;

/** Sends a WebSocket upgrade request, then resets the TCP connection at once (RST, no FIN). */
async function resetAfterUpgrade(path: string, token?: string): Promise<void> {
  const url = new URL(shared.daemon.url);
  const socket = connect(Number(url.port), url.hostname);
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const auth = token === undefined ? "" : `Authorization: Bearer ${token}\r\n`;
  const key = randomBytes(16).toString("base64");
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n${auth}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n`);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.resetAndDestroy();
  await closed;
}

describe("D-1 a peer cannot take the daemon down", () => {
  it("an upgrade request reset by the client (with or without a token) leaves the daemon answering", async () => {
    for (let round = 0; round < ATTACKS; round += 1) {
      await resetAfterUpgrade(`/sessions/${shared.sessionId}/stream`);
      await resetAfterUpgrade(`/sessions/${shared.sessionId}/stream`, shared.daemon.token);
      await resetAfterUpgrade("/sessions/nope/stream", shared.daemon.token);
    }
    expect((await call(shared.daemon, "GET", "/health")).body).toMatchObject({ ok: true });
    expect(shared.daemon.process.exitCode).toBeNull();
  });

  it("a malformed request line gets 400 and the daemon keeps answering", async () => {
    const url = new URL(shared.daemon.url);
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("NOT HTTP AT ALL\r\n\r\n");
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('"code":"bad_request"');
    expect((await call(shared.daemon, "GET", "/health")).status).toBe(200);
  });
});

describe("D-2 needs_reload follows the session, whoever reloads it", () => {
  it("is true after a catalog read finds a new skill, and false once Python reloads the session", async () => {
    writeSkill(join(shared.dirs.workspace, ".agents", "skills"), "later");
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}/catalog`)).body.needs_reload).toBe(true);
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body.needs_reload).toBe(true);
    const run = await call(shared.daemon, "POST", `/sessions/${shared.sessionId}/execute`, { code: "r = await commands.invoke('/reload', 'session')\nprint('reloaded')" });
    expect(run.body).toMatchObject({ status: "ok", outputs: [{ msg_type: "stream", content: { text: "reloaded\n" } }] });
    const session = (await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body;
    expect(session).toMatchObject({ needs_reload: false, selection: { effective: { later: { enabled: true } } } });
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}/catalog`)).body.needs_reload).toBe(false);
  });
});
