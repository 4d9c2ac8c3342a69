import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newOperationId } from "../../src/operations/index.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { KEY, KEY_ENV } from "../model/support.js";
import { call, killDaemon, outcomeOf, openStream, type DaemonProcess, type Dirs } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";
import { writeSkill } from "../support/skills.js";
import { EVERYTHING } from "../mcp/support.js";
import { picture } from "../images/fixtures.js";

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server?.close();
});
afterEach(() => {
  server.requests.length = 0;
});
// Registered after the hook above, so its afterEach runs first: each daemon is gone before the requests are cleared.
const fixture = daemonFixture();

/** A daemon whose global settings point the model at the fake server, with one workspace skill. */
async function daemonWith(model: object = {}): Promise<{ dirs: Dirs; daemon: DaemonProcess; session: string }> {
  const { dirs } = fixture;
  writeSkill(join(dirs.workspace, ".agents", "skills"), "pdf-processing", { body: "Fill the form.\n" });
  const settings = { model: { provider: "openai", base_url: server.baseUrl, name: "fake", api_key_env: KEY_ENV, mode: "tool", ...model } };
  await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
  const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
  const session = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
  return { dirs, daemon, session };
}

const say = (daemon: DaemonProcess, session: string, body: object) => call(daemon, "POST", `/sessions/${session}/events`, { operation_id: newOperationId(), ...body });
const prose = (text: string): FakeReply => ({ kind: "reply", text });
const toolCall = (name: string, args: object, id = `c_${name}`): FakeReply => ({ kind: "reply", toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

describe("O-3 O-9 turns in the daemon", () => {
  it("O-10 GET /operations/{id} shows the usage summed over the turn's model calls, cache reads included (null when none was reported); /status and the session resource the session's sum", async () => {
    const { daemon, session } = await daemonWith();
    server.enqueue(
      { ...toolCall("skill", { name: "pdf-processing" }), usage: { prompt_tokens: 1_000, completion_tokens: 10 } } as FakeReply,
      { kind: "reply", text: "Filled.", usage: { prompt_tokens: 1_200, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 1_024 } } },
    );
    const admitted = await say(daemon, session, { type: "message", text: "fill it" });
    const turn = await outcomeOf(daemon, admitted.body.operation_id);
    expect(turn).toMatchObject({ outcome: { usage: { input_tokens: 2_200, output_tokens: 30, cache_read_tokens: 1_024, cache_write_tokens: 0, model_calls: 2 } } });
    server.enqueue(prose("no counts"));
    const quiet = await outcomeOf(daemon, (await say(daemon, session, { type: "message", text: "again" })).body.operation_id);
    expect(quiet.outcome).toMatchObject({ result: "completed", usage: null });
    // The session's total, in /status.
    const status = await outcomeOf(daemon, (await say(daemon, session, { type: "command", command: "/status" })).body.operation_id);
    expect(status).toMatchObject({ outcome: { reply: { usage: { input_tokens: 2_200, output_tokens: 30, cache_read_tokens: 1_024, model_calls: 2 } } } });
    // And on the session resource.
    expect((await call(daemon, "GET", `/sessions/${session}`)).body.usage).toEqual({ input_tokens: 2_200, output_tokens: 30, cache_read_tokens: 1_024, cache_write_tokens: 0, model_calls: 2 });
  });

  it("runs an admitted message: the receipt shows the outcome, the transcript and the stream carry every row", async () => {
    const { daemon, session } = await daemonWith();
    const stream = await openStream(daemon, session);
    server.enqueue(toolCall("skill", { name: "pdf-processing" }), prose("Filled."));
    const admitted = await say(daemon, session, { type: "message", text: "fill it" });
    expect(admitted.status).toBe(202);
    const turn = await outcomeOf(daemon, admitted.body.operation_id);
    expect(turn).toMatchObject({ state: "committed", outcome: { state: "committed", result: "completed", reply: "Filled.", error: null } });
    const page = (await call(daemon, "GET", `/sessions/${session}/transcript`)).body;
    expect(page.rows.map((row: { kind: string }) => row.kind)).toEqual(["user", "skill", "assistant"]);
    expect(page.rows[1]).toMatchObject({ skill: "pdf-processing", via: "tool", text: expect.stringMatching(/^used skill pdf-processing · /), turn_id: turn.turn_id, seq: 2 });
    expect(page.next_after).toBeNull();
    await poll(() => stream.events.filter((e) => e.type === "row").length === 3, { what: "three rows on the stream" });
    expect(stream.events.some((e) => e.type === "text" && e.delta === "Filled.")).toBe(true);
    await stream.close();
  });

  it("runs turns one at a time in admission order", async () => {
    const { daemon, session } = await daemonWith();
    server.enqueue(prose("one"), prose("two"), prose("three"));
    const ids = [];
    for (const text of ["first", "second", "third"]) ids.push((await say(daemon, session, { type: "message", text })).body.operation_id as string);
    for (const id of ids) await outcomeOf(daemon, id);
    const lastUser = server.requests.map((r) => r.body.messages.filter((m: { role: string }) => m.role === "user").at(-1).content);
    expect(lastUser).toEqual(["first", "second", "third"]);
  });

  it("a user slash activation runs as a turn with its stored activation; session on beats project off", async () => {
    const { dirs, daemon, session } = await daemonWith();
    await mkdir(join(dirs.workspace, ".albedo"), { recursive: true });
    await writeFile(join(dirs.workspace, ".albedo", "settings.json"), JSON.stringify({ skills: { off: ["pdf-processing"] } }));
    const catalog = await call(daemon, "GET", `/sessions/${session}/catalog`);
    const patched = await call(daemon, "PATCH", `/sessions/${session}/catalog`, { on: ["pdf-processing"] }, { "if-match": catalog.headers.get("etag")! });
    expect(patched.status).toBe(200);
    server.enqueue(prose("ok"));
    const admitted = await say(daemon, session, { type: "command", command: "/pdf-processing", arguments: "go" });
    await outcomeOf(daemon, admitted.body.operation_id);
    const sent = server.requests[0]!.body;
    expect(sent.tools.find((t: { function: { name: string } }) => t.function.name === "skill").function.parameters.properties.name.enum).toContain("pdf-processing");
    expect(JSON.parse(sent.messages.at(-1).content).skill_activation.instructions).toContain("Fill the form.");
    const rows = (await call(daemon, "GET", `/sessions/${session}/transcript`)).body.rows;
    expect(rows[1]).toMatchObject({ kind: "skill", via: "user", already_loaded: false });
  });

  it("POST /sessions/{id}/interrupt ends the running turn as interrupted and interrupts its cell", async () => {
    const { daemon, session } = await daemonWith({ mode: "code" });
    server.enqueue(toolCall("python", { code: "import time\nprint('sleeping', flush=True)\ntime.sleep(60)" }));
    const stream = await openStream(daemon, session);
    const admitted = await say(daemon, session, { type: "message", text: "sleep" });
    await poll(() => stream.events.some((e) => e.type === "row" && (e.row as { kind: string }).kind === "code"), { what: "the code row" });
    expect((await call(daemon, "POST", `/sessions/${session}/interrupt`)).status).toBe(204);
    expect(await outcomeOf(daemon, admitted.body.operation_id)).toMatchObject({ outcome: { result: "interrupted" } });
    server.enqueue(prose("awake"));
    const next = await say(daemon, session, { type: "message", text: "again" });
    expect(await outcomeOf(daemon, next.body.operation_id)).toMatchObject({ outcome: { result: "completed", reply: "awake" } });
    await stream.close();
  });

  it("a failing model fails the turn with the reason; the session keeps serving", async () => {
    const { daemon, session } = await daemonWith();
    server.enqueue({ kind: "status", status: 400, body: '{"error": {"message": "unknown model"}}' });
    const admitted = await say(daemon, session, { type: "message", text: "x" });
    expect(await outcomeOf(daemon, admitted.body.operation_id)).toMatchObject({ outcome: { result: "failed", error: expect.stringMatching(/unknown model/) } });
    expect((await call(daemon, "POST", `/sessions/${session}/execute`, { code: "print(2 + 2)" })).body.outputs[0].content.text).toBe("4\n");
  });
});

describe("I-3 O-9 a turn's images over HTTP", () => {
  it("the output row of a python call that showed a plot carries the image with its url, in the transcript and on the stream; GET returns its bytes", async () => {
    const { dirs, daemon, session } = await daemonWith();
    const plot = await picture(320, 200);
    await writeFile(join(dirs.workspace, "plot.png"), plot);
    const stream = await openStream(daemon, session);
    server.enqueue(toolCall("python", { code: "from IPython.display import Image, display\ndisplay(Image(filename='plot.png'))" }), prose("A plot."));
    await outcomeOf(daemon, (await say(daemon, session, { type: "message", text: "plot it" })).body.operation_id);
    const page = (await call(daemon, "GET", `/sessions/${session}/transcript`)).body;
    const output = page.rows.find((row: { kind: string }) => row.kind === "output");
    expect(output.images).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{64}$/), mime: "image/png", width: 320, height: 200, bytes: plot.length, url: expect.any(String) }]);
    expect(output.images[0].url).toBe(`/sessions/${session}/images/${output.images[0].id}`);
    const outputRow = () => stream.events.find((e) => e.type === "row" && (e.row as { kind: string }).kind === "output")?.row as { images?: unknown } | undefined;
    await poll(() => outputRow() !== undefined, { what: "the output row on the stream" });
    expect(outputRow()!.images).toEqual(output.images);
    await stream.close();
    const got = await fetch(daemon.url + output.images[0].url, { headers: { authorization: `Bearer ${daemon.token}` } });
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await got.arrayBuffer()).equals(plot)).toBe(true);
    // A row without images has no images field.
    expect(page.rows.find((row: { kind: string }) => row.kind === "user")).not.toHaveProperty("images");
  });
});

describe("O-2 O-9 a daemon killed mid-turn", () => {
  it("after kill -9 the turn is abandoned, its input and rows are kept, and nothing runs twice", async () => {
    const { daemon, session } = await daemonWith({ mode: "code" });
    server.enqueue(toolCall("python", { code: "import time\nprint('sleeping', flush=True)\ntime.sleep(60)" }));
    const stream = await openStream(daemon, session);
    const admitted = await say(daemon, session, { type: "message", text: "sleep forever" });
    await poll(() => stream.events.some((e) => e.type === "row" && (e.row as { kind: string }).kind === "code"), { what: "the code row" });
    await killDaemon(daemon, "SIGKILL");
    const requestsBefore = server.requests.length;
    const again = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
    const turn = (await call(again, "GET", `/operations/${admitted.body.operation_id}`)).body.turn;
    expect(turn).toMatchObject({ state: "abandoned", visible_text: "sleep forever" });
    const rows = (await call(again, "GET", `/sessions/${session}/transcript`)).body.rows;
    expect(rows.map((row: { kind: string }) => row.kind)).toEqual(["user", "code"]);
    expect(server.requests.length).toBe(requestsBefore);
  });
});

describe("M-5 O-9 MCP calls in a daemon conversation", () => {
  it("stores and streams an mcp row for a function-tool call and one for a call the model's code makes", async () => {
    const { dirs } = fixture;
    const settings = {
      model: { provider: "openai", base_url: server.baseUrl, name: "fake", api_key_env: KEY_ENV, mode: "tool" },
      mcp: { servers: { everything: { command: EVERYTHING } } },
    };
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
    const session = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const stream = await openStream(daemon, session);
    server.enqueue(
      toolCall("mcp__everything__echo", { message: "as a tool" }),
      toolCall("python", { code: "print(await mcp.everything.echo(message='from code'))" }),
      prose("Echoed twice."),
    );
    const admitted = await say(daemon, session, { type: "message", text: "echo" });
    expect((await outcomeOf(daemon, admitted.body.operation_id)).outcome).toMatchObject({ result: "completed" });
    const rows = (await call(daemon, "GET", `/sessions/${session}/transcript`)).body.rows as { kind: string; via?: string; text?: string }[];
    const mcpRows = rows.filter((row) => row.kind === "mcp");
    expect(mcpRows).toMatchObject([
      { server: "everything", tool: "echo", via: "tool", is_error: false, text: expect.stringMatching(/^used everything\.echo · /) },
      { server: "everything", tool: "echo", via: "python", is_error: false },
    ]);
    await poll(() => stream.events.filter((e) => e.type === "row" && (e as { row: { kind: string } }).row.kind === "mcp").length === 2, { what: "two mcp rows on the stream" });
    await stream.close();
  });
});
