/**
 * Turns through a real daemon process against the local OpenAI-compatible server, where the model
 * or the kernel is the hostile party: a FIFO the model's Python plants and then reads, text that
 * is not well-formed UTF-16.
 */
import { closeSync, constants, existsSync, openSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newOperationId } from "../../src/operations/index.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { KEY, KEY_ENV } from "../model/support.js";
import { call, openStream, outcomeOf, type DaemonProcess, type Dirs } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";

let server: FakeOpenAI;
// SIGKILL: a daemon whose main thread is stuck in a system call never runs a SIGTERM handler.
const fixture = daemonFixture({ signal: "SIGKILL" });
/** FIFOs a test planted: opened for writing before cleanup, so a reader blocked on one (the bug) gets its end of file. */
const fifos: string[] = [];

beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server?.close();
});
afterEach(async () => {
  for (const fifo of fifos.splice(0)) if (existsSync(fifo)) closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
  server.requests.length = 0;
});

async function daemonWith(): Promise<{ dirs: Dirs; daemon: DaemonProcess; session: string }> {
  const { dirs } = fixture;
  const settings = { model: { provider: "openai", base_url: server.baseUrl, name: "fake", api_key_env: KEY_ENV, mode: "tool" } };
  await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
  const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
  const session = (await call(daemon, "POST", `/sessions`, { workspace: dirs.workspace })).body.id as string;
  return { dirs, daemon, session };
}

const say = (daemon: DaemonProcess, session: string, text: string) => call(daemon, "POST", `/sessions/${session}/events`, { operation_id: newOperationId(), type: "message", text });
const toolCall = (name: string, args: object, id = `c_${name}`): FakeReply => ({ kind: "reply", toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

describe("O-5 B the read tool on a FIFO the model's Python planted", () => {
  it("answers 'not a regular file' at once, and GET /health answers while nothing writes to the FIFO", async () => {
    const { dirs, daemon, session } = await daemonWith();
    fifos.push(join(dirs.workspace, "pipe"));
    server.enqueue(toolCall("python", { code: "import os\nos.mkfifo('pipe')\nprint('planted')" }), toolCall("read", { path: "pipe" }), { kind: "reply", text: "done" });
    const admitted = await say(daemon, session, "read the pipe");
    await poll(() => server.requests.length >= 3, { what: "the read tool's result to reach the model" });
    expect(server.requests[1]!.body.messages.at(-1).content).toContain("planted");
    const result = server.requests[2]!.body.messages.at(-1).content as string;
    expect(result).toBe("Cannot read pipe: it is a FIFO, not a regular file; the read tool reads regular files only.");
    const health = await call(daemon, "GET", "/health");
    expect(health.status).toBe(200);
    expect(await outcomeOf(daemon, admitted.body.operation_id)).toMatchObject({ outcome: { result: "completed", reply: "done" } });
  });
});

/** The body of GET `path` as raw bytes, decoded by a decoder that refuses ill-formed UTF-8, then parsed. */
async function strictGet(daemon: DaemonProcess, path: string): Promise<unknown> {
  const res = await fetch(daemon.url + path, { headers: { authorization: `Bearer ${daemon.token}` } });
  expect(res.status).toBe(200);
  const text = new TextDecoder("utf-8", { fatal: true }).decode(await res.arrayBuffer());
  return JSON.parse(text) as unknown;
}

/** Every string in a parsed value, keys included. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => [key, ...stringsOf(item)]);
}

/** Asserts a served value holds no lone surrogate (a strict parser takes it) and shows U+FFFD where one was sent. */
function expectWellFormed(value: unknown, what: string): void {
  const broken = stringsOf(value).filter((text) => !text.isWellFormed());
  expect(broken, what).toEqual([]);
  expect(stringsOf(value).some((text) => text.includes("\ufffd")), what).toBe(true);
}

describe("O-9 B lone surrogates from a model are stored and served as U+FFFD", () => {
  it("in prose and in tool-call arguments: the transcript, the receipt and the stream parse strictly; a surrogate pair split across deltas stays whole", async () => {
    const { daemon, session } = await daemonWith();
    const stream = await openStream(daemon, session);
    // One lone surrogate as an escape inside the arguments' own JSON, one as a character of the arguments text.
    const args = String.raw`{"code": "print(len('\ud800'), len('` + "\udc00" + `'))"}`;
    server.enqueue({ kind: "reply", toolCalls: [{ id: "c_python", name: "python", arguments: args }] }, { kind: "reply", text: "a😀b\ud800", pieces: 5 });
    const admitted = await say(daemon, session, "hi");
    const turn = await outcomeOf(daemon, admitted.body.operation_id);
    expectWellFormed(await strictGet(daemon, `/sessions/${session}/transcript`), "the transcript");
    expectWellFormed(await strictGet(daemon, `/operations/${admitted.body.operation_id}`), "the receipt");
    expect(turn).toMatchObject({ outcome: { result: "completed", reply: "a😀b\ufffd" } });
    expect(server.requests[1]!.body.messages.at(-1).content).toContain("1 1");
    await poll(() => stream.events.some((e) => e.type === "row" && (e.row as { kind: string }).kind === "assistant"), { what: "the assistant row on the stream" });
    expectWellFormed(stream.events, "the stream");
    await stream.close();
  });

  it("a request body that escapes a lone surrogate is refused with 400 invalid_body, never stored", async () => {
    const { daemon, session } = await daemonWith();
    const body = `{"operation_id": "${newOperationId()}", "type": "message", "text": "x\\ud800"}`;
    const refused = await call(daemon, "POST", `/sessions/${session}/events`, body);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "invalid_body" });
  });
});
