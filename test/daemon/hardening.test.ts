import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SETTINGS_SKILL_NAMES } from "../../src/settings/index.js";
import { call, killDaemon, makeDirs, startDaemon, writeSkill, type Answer, type DaemonProcess, type Dirs } from "./support/daemon.js";

let dirs: Dirs;
let daemon: DaemonProcess;
let sessionId: string;
/** Upgrade requests reset by the client in the attack test; one is often enough, more make the race certain. */
const ATTACKS = 20;

beforeAll(async () => {
  dirs = await makeDirs();
  await writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
  daemon = await startDaemon(dirs);
  sessionId = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id;
}, 120_000);

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
});

/** Sends a WebSocket upgrade request, then resets the TCP connection at once (RST, no FIN). */
async function resetAfterUpgrade(path: string, token?: string): Promise<void> {
  const url = new URL(daemon.url);
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

/** One request with a raw body, whatever the method (fetch refuses a body on GET). */
function rawCall(method: string, path: string, body: string): Promise<Omit<Answer, "headers">> {
  const url = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname, port: Number(url.port), method, path,
        headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("D-1 a peer cannot take the daemon down", () => {
  it("an upgrade request reset by the client (with or without a token) leaves the daemon answering", async () => {
    for (let round = 0; round < ATTACKS; round += 1) {
      await resetAfterUpgrade(`/sessions/${sessionId}/stream`);
      await resetAfterUpgrade(`/sessions/${sessionId}/stream`, daemon.token);
      await resetAfterUpgrade("/sessions/nope/stream", daemon.token);
    }
    expect((await call(daemon, "GET", "/health")).body).toMatchObject({ ok: true });
    expect(daemon.process.exitCode).toBeNull();
  });

  it("a malformed request line gets 400 and the daemon keeps answering", async () => {
    const url = new URL(daemon.url);
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("NOT HTTP AT ALL\r\n\r\n");
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
  });
});

describe("D-2 needs_reload follows the session, whoever reloads it", () => {
  it("is true after a catalog read finds a new skill, and false once Python reloads the session", async () => {
    await writeSkill(join(dirs.workspace, ".agents", "skills"), "later");
    expect((await call(daemon, "GET", `/sessions/${sessionId}/catalog`)).body.needs_reload).toBe(true);
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).body.needs_reload).toBe(true);
    const run = await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code: "r = await commands.invoke('/reload', 'session')\nprint('reloaded')" });
    expect(run.body).toMatchObject({ status: "ok", outputs: [{ msg_type: "stream", content: { text: "reloaded\n" } }] });
    const session = (await call(daemon, "GET", `/sessions/${sessionId}`)).body;
    expect(session).toMatchObject({ needs_reload: false, selection: { effective: { later: { enabled: true } } } });
    expect((await call(daemon, "GET", `/sessions/${sessionId}/catalog`)).body.needs_reload).toBe(false);
  });
});

describe("D-4 project settings writes stay in the workspace", () => {
  const patch = (workspace: string) => call(daemon, "PATCH", "/settings", { scope: "project", workspace, skills: { off: ["demo"] } }, { "if-match": '"absent"' });

  it("refuses a workspace that is not an existing directory", async () => {
    const file = join(dirs.root, "plain-file");
    await writeFile(file, "");
    expect((await patch(file)).body).toMatchObject({ status: 400, code: "invalid_body", field: "workspace" });
    expect((await patch(join(dirs.root, "missing"))).body).toMatchObject({ status: 400, code: "invalid_body", field: "workspace" });
    expect(existsSync(join(dirs.root, "missing"))).toBe(false);
  });

  it("refuses a .albedo that is a symlink (e.g. planted to point at the state dir) and writes nothing", async () => {
    const planted = join(dirs.root, "planted");
    await mkdir(planted);
    await symlink(dirs.state, join(planted, ".albedo"));
    const res = await patch(planted);
    expect(res.body).toMatchObject({ status: 400, code: "settings_path_unsafe", field: "workspace" });
    expect(existsSync(join(dirs.state, "settings.json"))).toBe(false);
    const notDir = join(dirs.root, "notdir");
    await mkdir(notDir);
    await writeFile(join(notDir, ".albedo"), "");
    expect((await patch(notDir)).body).toMatchObject({ status: 400, code: "settings_path_unsafe" });
  });
});

describe("D-4 session overrides hold the settings bounds", () => {
  it(`PATCH /sessions/{id}/catalog refuses an override list past MAX_SETTINGS_SKILL_NAMES (${MAX_SETTINGS_SKILL_NAMES}) and changes nothing`, async () => {
    const before = await call(daemon, "GET", `/sessions/${sessionId}/catalog`);
    const names = Array.from({ length: MAX_SETTINGS_SKILL_NAMES + 1 }, (_, index) => `n${index}`);
    const res = await call(daemon, "PATCH", `/sessions/${sessionId}/catalog`, { off: names }, { "if-match": `"${before.body.revision}"` });
    expect(res.body).toMatchObject({ status: 400, code: "invalid_params" });
    expect(res.body.problems[0].path).toBe("skills.off");
    expect((await call(daemon, "GET", `/sessions/${sessionId}/catalog`)).body.revision).toBe(before.body.revision);
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).body.selection.scopes.session?.skills).toBeUndefined();
  });
});

describe("D-1 bodiless routes refuse a body", () => {
  it("GET and DELETE answer 400 invalid_body for a non-empty body, accept {} and act on nothing", async () => {
    const routes: [string, string][] = [
      ["GET", "/health"],
      ["GET", "/sessions"],
      ["GET", `/sessions/${sessionId}`],
      ["GET", `/sessions/${sessionId}/catalog`],
      ["GET", "/settings"],
      ["GET", "/operations/0190a5d2-0000-7000-8000-000000000000"],
      ["DELETE", `/sessions/${sessionId}`],
    ];
    for (const [method, path] of routes) {
      expect((await rawCall(method, path, '{"stray": 1}')).body, `${method} ${path}`).toMatchObject({ status: 400, code: "invalid_body", field: "stray" });
      expect((await rawCall(method, path, "[1]")).body, `${method} ${path}`).toMatchObject({ status: 400, code: "invalid_body" });
    }
    expect((await call(daemon, "GET", `/sessions/${sessionId}`)).status).toBe(200);
    expect((await rawCall("GET", "/health", "{}")).status).toBe(200);
    expect((await rawCall("DELETE", `/sessions/${sessionId}`, "{}")).status).toBe(204);
  });
});
