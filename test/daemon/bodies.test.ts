import { existsSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newOperationId } from "../../src/operations/index.js";
import { MAX_SETTINGS_SKILL_NAMES } from "../../src/settings/index.js";
import { call } from "./support/daemon.js";
import { inProcessDaemonSession } from "../support/daemonSession.js";

const shared = inProcessDaemonSession();

/** One request whose body is exactly `bytes` (fetch would re-encode a string as UTF-8). */
function rawBytes(method: string, path: string, bytes: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const url = new URL(shared.daemon.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname, port: Number(url.port), method, path,
        headers: { authorization: `Bearer ${shared.daemon.token}`, "content-type": "application/json", "content-length": String(bytes.length), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined });
        });
      },
    );
    req.on("error", reject);
    req.end(bytes);
  });
}

/** JSON text with one raw byte that is not UTF-8 spliced in where `\u0000` stands; returns the bytes and the byte's offset. */
function withBadByte(template: string, bad = 0xff): { bytes: Buffer; offset: number } {
  const [head, tail] = template.split("\\u0000") as [string, string];
  const before = Buffer.from(head, "utf8");
  return { bytes: Buffer.concat([before, Buffer.from([bad]), Buffer.from(tail, "utf8")]), offset: before.length };
}

describe("D-1 B a body that is not UTF-8 is refused, never stored with replacement characters", () => {
  it("POST /sessions/{id}/events: 400 invalid_body naming the byte offset, and nothing is admitted", async () => {
    const operationId = newOperationId();
    const { bytes, offset } = withBadByte(JSON.stringify({ operation_id: operationId, type: "message", text: "caf\u0000 au lait" }), 0xe9);
    const answer = await rawBytes("POST", `/sessions/${shared.sessionId}/events`, bytes);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "invalid_body", offset });
    expect(String(answer.body?.detail)).toContain(`byte ${offset}`);
    expect((await call(shared.daemon, "GET", `/operations/${operationId}`)).status).toBe(404);
  });

  it("PATCH /settings: 400 invalid_body, and the settings file keeps its revision", async () => {
    const before = await call(shared.daemon, "GET", "/settings");
    const revision = before.body.global.revision as string;
    const { bytes, offset } = withBadByte(JSON.stringify({ scope: "global", kernel: { kernelspec: "py\u0000thon3" } }));
    const answer = await rawBytes("PATCH", "/settings", bytes, { "if-match": `"${revision}"` });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "invalid_body", offset });
    expect((await call(shared.daemon, "GET", "/settings")).body.global.revision).toBe(revision);
  });

  it("a truncated multi-byte sequence, an overlong encoding and an encoded surrogate are refused on POST /sessions and /execute too", async () => {
    const cases: [string, Buffer][] = [
      ["truncated", Buffer.from([0xe2, 0x82])],
      ["overlong", Buffer.from([0xc0, 0xaf])],
      ["surrogate", Buffer.from([0xed, 0xa0, 0x80])],
    ];
    for (const [what, bad] of cases) {
      for (const [path, template] of [
        ["/sessions", JSON.stringify({ workspace: `${shared.dirs.workspace}/\u0000` })],
        [`/sessions/${shared.sessionId}/execute`, JSON.stringify({ code: "x = '\u0000'" })],
      ] as const) {
        const [head, tail] = template.split("\\u0000") as [string, string];
        const bytes = Buffer.concat([Buffer.from(head), bad, Buffer.from(tail)]);
        const answer = await rawBytes("POST", path, bytes);
        expect({ what, path, status: answer.status, code: answer.body?.code, offset: answer.body?.offset }).toEqual({
          what, path, status: 400, code: "invalid_body", offset: Buffer.byteLength(head),
        });
      }
    }
  });

  it("valid UTF-8 outside ASCII is still accepted", async () => {
    const answer = await rawBytes("POST", `/sessions/${shared.sessionId}/events`, Buffer.from(JSON.stringify({ operation_id: newOperationId(), type: "message", text: "café ☕ 𝄞" }), "utf8"));
    expect(answer.status).toBe(202);
  });
});

describe("D-1 every body is parsed once, at its route, and an unknown field is refused by its path", () => {
  it("refuses a stray field on every route that takes a body, naming it", async () => {
    const cases: [string, string, unknown, string][] = [
      ["POST", "/sessions", { workspace: shared.dirs.workspace, kernel: "python3" }, "kernel"],
      ["POST", "/sessions", { workspace: shared.dirs.workspace, extensions: { skills: "yes" } }, "extensions.skills"],
      ["POST", "/sessions", { workspace: "relative/dir" }, "workspace"],
      ["POST", `/sessions/${shared.sessionId}/execute`, { code: "1", silent: true }, "silent"],
      ["PATCH", `/sessions/${shared.sessionId}/catalog`, { off: ["x"], disable: ["y"] }, "disable"],
      ["PATCH", "/settings", { scope: "global", kernel: { pool: 1, pools: 2 } }, "kernel.pools"],
      ["PATCH", "/settings", { scope: "global", limits: { memoryMB: 1 } }, "limits.memoryMB"],
      ["POST", `/sessions/${shared.sessionId}/events`, { operation_id: newOperationId(), type: "message", text: "x", extra: 1 }, "extra"],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await call(shared.daemon, method, path, body, { "if-match": '"anything"' });
      expect({ path, status: answer.status, code: answer.body.code, field: answer.body.field }).toEqual({ path, status: 400, code: "invalid_body", field });
    }
  });

  it("GET, DELETE and the bodiless POSTs answer 400 invalid_body for a non-empty body, accept {} and act on nothing", async () => {
    const routes: [string, string][] = [
      ["GET", "/health"],
      ["GET", "/sessions"],
      ["GET", `/sessions/${shared.sessionId}`],
      ["GET", `/sessions/${shared.sessionId}/catalog`],
      ["GET", "/settings"],
      ["GET", "/openapi.json"],
      ["GET", "/operations/0190a5d2-0000-7000-8000-000000000000"],
      ["POST", `/sessions/${shared.sessionId}/reload`],
      ["POST", `/sessions/${shared.sessionId}/interrupt`],
      ["DELETE", `/sessions/${shared.sessionId}`],
    ];
    for (const [method, path] of routes) {
      expect((await rawBytes(method, path, Buffer.from('{"stray": 1}'))).body, `${method} ${path}`).toMatchObject({ status: 400, code: "invalid_body", field: "stray" });
      expect((await rawBytes(method, path, Buffer.from("[1]"))).body, `${method} ${path}`).toMatchObject({ status: 400, code: "invalid_body" });
    }
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).status).toBe(200);
    expect((await rawBytes("GET", "/health", Buffer.from("{}"))).status).toBe(200);
    expect((await rawBytes("DELETE", `/sessions/${shared.sessionId}`, Buffer.from("{}"))).status).toBe(204);
    await shared.reopen();
  });

  it("checks an external kernel's fields together: kernel_pid goes with kernel external, and names a running process", async () => {
    const post = (extra: Record<string, unknown>) => call(shared.daemon, "POST", "/sessions", { workspace: shared.dirs.workspace, ...extra });
    for (const [extra, field] of [
      [{ kernel: "external" }, "kernel_pid"],
      [{ kernel: "external", kernel_pid: -1 }, "kernel_pid"],
      [{ kernel: "external", kernel_pid: "12" }, "kernel_pid"],
      [{ kernel: "external", kernel_pid: 2 ** 22 + 12345 }, "kernel_pid"],
      [{ kernel: "elsewhere", kernel_pid: process.pid }, "kernel"],
      [{ kernel_pid: process.pid }, "kernel_pid"],
      [{ kernel: "external", kernel_pid: process.pid, pid: 1 }, "pid"],
    ] as const) {
      const answer = await post(extra);
      expect([answer.status, answer.body.field], JSON.stringify(extra)).toEqual([400, field]);
    }
  });
});

describe("D-4 project settings writes stay in the workspace", () => {
  const patch = (workspace: string) => call(shared.daemon, "PATCH", "/settings", { scope: "project", workspace, skills: { off: ["demo"] } }, { "if-match": '"absent"' });

  it("refuses a workspace that is not an existing directory", async () => {
    const file = join(shared.dirs.root, "plain-file");
    await writeFile(file, "");
    expect((await patch(file)).body).toMatchObject({ status: 400, code: "invalid_body", field: "workspace" });
    expect((await patch(join(shared.dirs.root, "missing"))).body).toMatchObject({ status: 400, code: "invalid_body", field: "workspace" });
    expect(existsSync(join(shared.dirs.root, "missing"))).toBe(false);
  });

  it("refuses a .albedo that is a symlink (e.g. planted to point at the state dir) and writes nothing", async () => {
    const planted = join(shared.dirs.root, "planted");
    await mkdir(planted);
    await symlink(shared.dirs.state, join(planted, ".albedo"));
    const res = await patch(planted);
    expect(res.body).toMatchObject({ status: 400, code: "settings_path_unsafe", field: "workspace" });
    expect(existsSync(join(shared.dirs.state, "settings.json"))).toBe(false);
    const notDir = join(shared.dirs.root, "notdir");
    await mkdir(notDir);
    await writeFile(join(notDir, ".albedo"), "");
    expect((await patch(notDir)).body).toMatchObject({ status: 400, code: "settings_path_unsafe" });
  });
});

describe("D-4 session overrides hold the settings bounds", () => {
  it(`PATCH /sessions/{id}/catalog refuses an override list past MAX_SETTINGS_SKILL_NAMES (${MAX_SETTINGS_SKILL_NAMES}) and changes nothing`, async () => {
    const before = await call(shared.daemon, "GET", `/sessions/${shared.sessionId}/catalog`);
    const names = Array.from({ length: MAX_SETTINGS_SKILL_NAMES + 1 }, (_, index) => `n${index}`);
    const res = await call(shared.daemon, "PATCH", `/sessions/${shared.sessionId}/catalog`, { off: names }, { "if-match": `"${before.body.revision}"` });
    expect(res.body).toMatchObject({ status: 400, code: "invalid_params" });
    expect(res.body.problems[0].path).toBe("skills.off");
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}/catalog`)).body.revision).toBe(before.body.revision);
    expect((await call(shared.daemon, "GET", `/sessions/${shared.sessionId}`)).body.selection.scopes.session?.skills).toBeUndefined();
  });
});
