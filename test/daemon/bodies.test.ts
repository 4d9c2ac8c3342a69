import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOperationId } from "../../src/operations/index.js";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "./support/daemon.js";

let dirs: Dirs;
let daemon: DaemonProcess;
let sessionId: string;

beforeAll(async () => {
  dirs = await makeDirs();
  daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
  sessionId = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id;
}, 120_000);

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
});

/** One request whose body is exactly `bytes` (fetch would re-encode a string as UTF-8). */
function rawBytes(method: string, path: string, bytes: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  const url = new URL(daemon.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname, port: Number(url.port), method, path,
        headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/json", "content-length": String(bytes.length), ...headers },
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
    const { bytes, offset } = withBadByte(JSON.stringify({ operationId, type: "message", text: "caf\u0000 au lait" }), 0xe9);
    const answer = await rawBytes("POST", `/sessions/${sessionId}/events`, bytes);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "invalid_body", offset });
    expect(String(answer.body?.detail)).toContain(`byte ${offset}`);
    expect((await call(daemon, "GET", `/operations/${operationId}`)).status).toBe(404);
  });

  it("PATCH /settings: 400 invalid_body, and the settings file keeps its revision", async () => {
    const before = await call(daemon, "GET", "/settings");
    const revision = before.body.global.revision as string;
    const { bytes, offset } = withBadByte(JSON.stringify({ scope: "global", kernel: { kernelspec: "py\u0000thon3" } }));
    const answer = await rawBytes("PATCH", "/settings", bytes, { "if-match": `"${revision}"` });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "invalid_body", offset });
    expect((await call(daemon, "GET", "/settings")).body.global.revision).toBe(revision);
  });

  it("a truncated multi-byte sequence, an overlong encoding and an encoded surrogate are refused on POST /sessions and /execute too", async () => {
    const cases: [string, Buffer][] = [
      ["truncated", Buffer.from([0xe2, 0x82])],
      ["overlong", Buffer.from([0xc0, 0xaf])],
      ["surrogate", Buffer.from([0xed, 0xa0, 0x80])],
    ];
    for (const [what, bad] of cases) {
      for (const [path, template] of [
        ["/sessions", JSON.stringify({ workspace: `${dirs.workspace}/\u0000` })],
        [`/sessions/${sessionId}/execute`, JSON.stringify({ code: "x = '\u0000'" })],
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
    const answer = await rawBytes("POST", `/sessions/${sessionId}/events`, Buffer.from(JSON.stringify({ operationId: newOperationId(), type: "message", text: "café ☕ 𝄞" }), "utf8"));
    expect(answer.status).toBe(202);
  });
});
