import { randomBytes } from "node:crypto";
import { STATUS_CODES } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { PROBLEMS, type ProblemCode } from "../../src/api/index.js";
import { HttpProblem, problemOf, problemResponse } from "../../src/daemon/problem.js";
import { AppError } from "../../src/errors/index.js";
import { call, type Answer } from "./support/daemon.js";
import { inProcessDaemonSession } from "../support/daemonSession.js";

const shared = inProcessDaemonSession();

/** Checks `answer` is the problem document of `code`, with the status, type and title of its one table entry. */
function expectProblem(answer: Answer, code: ProblemCode): void {
  expect(answer.status).toBe(PROBLEMS[code].status);
  expect(answer.headers.get("content-type")).toBe("application/problem+json");
  expect(answer.body).toMatchObject({ type: `urn:albedo:problem:${code}`, title: PROBLEMS[code].title, status: PROBLEMS[code].status, code, detail: expect.any(String) });
}

/** Writes `request` on a raw socket and returns all the daemon sent before it closed the connection. */
async function rawExchange(request: string): Promise<string> {
  const url = new URL(shared.daemon.url);
  const socket = connect(Number(url.port), url.hostname);
  let answer = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(request);
  await new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return answer;
}

function upgrade(path: string, token?: string, host = `localhost:${new URL(shared.daemon.url).port}`): string {
  const auth = token === undefined ? "" : `Authorization: Bearer ${token}\r\n`;
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n\r\n`;
}

/** The status line and the parsed problem document of a raw HTTP answer. */
function parseRaw(raw: string): { statusLine: string; contentType: string | undefined; body: Record<string, unknown> } {
  const [head, body] = raw.split("\r\n\r\n") as [string, string];
  const lines = head.split("\r\n");
  const contentType = lines.find((line) => line.toLowerCase().startsWith("content-type:"))?.split(":")[1]!.trim();
  return { statusLine: lines[0]!, contentType, body: JSON.parse(body) as Record<string, unknown> };
}

describe("D-1 one problem producer", () => {
  it("answers every HTTP refusal with a problem document whose status, type and title come from the one table", async () => {
    const noToken = await fetch(`${shared.daemon.url}/health`);
    const unauthorized: Answer = { status: noToken.status, headers: noToken.headers, body: await noToken.json() };
    expectProblem(unauthorized, "unauthorized");
    expect(unauthorized.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expectProblem(await call(shared.daemon, "GET", "/nowhere"), "route_not_found");
    const wrongMethod = await call(shared.daemon, "PUT", "/sessions");
    expectProblem(wrongMethod, "method_not_allowed");
    expect(wrongMethod.headers.get("allow")).toBe("POST, GET");
    expectProblem(await call(shared.daemon, "POST", "/sessions", "{not json"), "invalid_json");
    expectProblem(await call(shared.daemon, "POST", "/sessions", "{}", { "content-type": "text/plain" }), "unsupported_media_type");
    expectProblem(await call(shared.daemon, "GET", "/sessions/nope"), "session_not_found");
    expectProblem(await call(shared.daemon, "GET", `/sessions/${shared.sessionId}/stream`), "upgrade_required");
    expectProblem(await call(shared.daemon, "GET", "/settings?workspace=relative"), "invalid_query");
    expectProblem(await call(shared.daemon, "PATCH", `/sessions/${shared.sessionId}/catalog`, {}), "precondition_required");
  });

  it("names the field at fault by its path, and lists every problem", async () => {
    const answer = await call(shared.daemon, "PATCH", "/settings", { scope: "global", skills: { on: ["a", "b", ""], off: 3 }, colour: "red" }, { "if-match": '"absent"' });
    expectProblem(answer, "invalid_body");
    expect(answer.body.field).toBe("skills.on[2]");
    expect(answer.body.problems.map((problem: { path: string }) => problem.path)).toEqual(["skills.on[2]", "skills.off", "colour"]);
    expect(answer.body.detail).toContain("skills.on[2]");
  });

  it("refuses a WebSocket upgrade with the same document and the right reason phrase on the raw socket", async () => {
    const cases: [string, string | undefined, ProblemCode, string?][] = [
      [`/sessions/${shared.sessionId}/stream`, undefined, "unauthorized"],
      ["/sessions/nope/stream", shared.daemon.token, "session_not_found"],
      ["/elsewhere", shared.daemon.token, "route_not_found"],
      [`/sessions/${shared.sessionId}/stream`, shared.daemon.token, "origin_not_allowed", "rebound.example:80"],
    ];
    for (const [path, token, code, host] of cases) {
      const { statusLine, contentType, body } = parseRaw(await rawExchange(upgrade(path, token, host)));
      expect(statusLine).toBe(`HTTP/1.1 ${PROBLEMS[code].status} ${STATUS_CODES[PROBLEMS[code].status]}`);
      expect(contentType).toBe("application/problem+json");
      expect(body).toMatchObject({ code, status: PROBLEMS[code].status, title: PROBLEMS[code].title });
    }
  });

  it("answers a request that is not HTTP with 400 bad_request on the raw socket, and keeps serving", async () => {
    const { statusLine, body } = parseRaw(await rawExchange("NOT HTTP AT ALL\r\n\r\n"));
    expect(statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect(body).toMatchObject({ code: "bad_request", status: 400 });
    expect((await call(shared.daemon, "GET", "/health")).status).toBe(200);
  });

  it("writes the reason phrase of the status, never a fixed one: a 503 says Service Unavailable, a 507 Insufficient Storage", () => {
    for (const code of Object.keys(PROBLEMS) as ProblemCode[]) {
      const status = PROBLEMS[code].status;
      expect(problemResponse(new HttpProblem(code, "x"))).toMatch(new RegExp(`^HTTP/1\\.1 ${status} ${STATUS_CODES[status]}\\r\\n`));
    }
  });

  it("maps domain errors by their code alone, with their data as snake_case fields", () => {
    const conflict = problemOf(new AppError("conflict", "changed", { currentRevision: "abc", expectedRevision: "def" }));
    expect(conflict.status).toBe(409);
    expect(conflict.document()).toMatchObject({ code: "conflict", current_revision: "abc", expected_revision: "def" });
    expect(problemOf(new AppError("kernel_died", "gone", { type: "not a problem type" })).document().type).toBe("urn:albedo:problem:kernel_died");
    expect(problemOf(new Error("a bug")).document()).toMatchObject({ status: 500, code: "internal_error" });
  });
});
