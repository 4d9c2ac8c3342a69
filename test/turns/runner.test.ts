import { existsSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelAdapter } from "../../src/model/index.js";
import type { Session } from "../../src/session/index.js";
import { loadPrompts, type ToolMode } from "../../src/turns/context.js";
import { EMPTY_CONVERSATION, type ConversationState } from "../../src/turns/conversation.js";
import { MAX_TOOL_RESULT_BYTES, MAX_TURN_STEPS } from "../../src/turns/limits.js";
import type { TranscriptRow } from "../../src/turns/rows.js";
import { runTurn, type TurnEnd, type TurnRequest } from "../../src/turns/runner.js";
import type { TurnHost } from "../../src/turns/index.js";
import { createAdapter } from "../../src/model/index.js";
import { closedPort, startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { ENV, openaiAdapter, openaiSettings } from "../model/support.js";
import { openSession, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { installDir } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { roots, writeSkill } from "../support/skills.js";

const BODY = "# PDF processing\n\nFill forms with references/forms.md.";
let dirs: SessionDirs;
let session: Session;
let server: FakeOpenAI;
let adapter: ModelAdapter;
const prompts = loadPrompts(installDir());

beforeAll(async () => {
  dirs = await sessionDirs();
  const skill = writeSkill(roots.wsAgents(dirs.workspace), "pdf-processing", { body: `${BODY}\n` });
  await mkdir(join(skill, "references"));
  await writeFile(join(skill, "references", "forms.md"), "Use the form tool.\n");
  await writeFile(join(dirs.workspace, "notes.txt"), "workspace notes\n");
  await writeFile(join(dirs.root, "outside.txt"), "not for the model\n");
  await symlink(join(dirs.root, "outside.txt"), join(dirs.workspace, "sneaky.txt"));
  session = await openSession(dirs);
  server = await startFakeOpenAI();
  adapter = await openaiAdapter(server);
});

afterAll(async () => {
  await session?.close();
  await server?.close();
  await dirs?.cleanup();
});

let state: ConversationState;
beforeEach(() => {
  state = EMPTY_CONVERSATION;
  server.requests.length = 0;
});

const call = (name: string, args: unknown, id = `call_${name}`): FakeReply => ({
  kind: "reply",
  toolCalls: [{ id, name, arguments: typeof args === "string" ? args : JSON.stringify(args) }],
});
const prose = (text: string): FakeReply => ({ kind: "reply", text });

/** Runs one turn with `replies` queued; returns how it ended and every row it drew. */
async function turn(text: string, replies: FakeReply[], options: { mode?: ToolMode; signal?: AbortSignal; contextTokens?: number; request?: Partial<TurnRequest>; host?: TurnHost } = {}): Promise<{ end: TurnEnd; rows: TranscriptRow[] }> {
  server.enqueue(...replies);
  const rows: TranscriptRow[] = [];
  const done = await runTurn(
    { turnId: `t${Math.random()}`, visibleText: text, modelInput: text, ...options.request },
    state,
    { adapter, mode: options.mode ?? "tool", contextTokens: options.contextTokens ?? 32_768, prompts, host: options.host ?? session, emit: (row) => rows.push(row) },
    options.signal ?? new AbortController().signal,
  );
  state = done.state;
  return { end: done.end, rows };
}

/** The session as a turn's host, adding the stream text of every cell the turn runs to `printed` as it comes. */
function printingHost(printed: string[]): TurnHost {
  return {
    workspace: session.workspace,
    stateDir: session.stateDir,
    get view() {
      return session.view;
    },
    execute(code) {
      const future = session.execute(code);
      future.onOutput((output) => {
        if (output.header.msg_type === "stream") printed.push((output.content as { text: string }).text);
      });
      return future;
    },
    interrupt: () => session.interrupt(),
    activate: (skill, text) => session.activate(skill, text),
    resources: (skill) => session.resources(skill),
    observeActivations: (observer) => session.observeActivations(observer),
  };
}

const toolResults = (index: number) => (server.requests[index]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool").map((m) => m.content);

describe("O-5 O-6 the skill tool: loaded once, every pull visible", () => {
  it("offers skill with the enabled skills in its enum, lists them in message[0], and returns the body with its dir", async () => {
    const { end, rows } = await turn("fill the form", [call("skill", { name: "pdf-processing" }), prose("Done.")]);
    expect(end).toEqual({ result: "completed", reply: "Done." });
    const first = server.requests[0]!.body;
    expect(first.messages[0].role).toBe("system");
    expect(first.messages[0].content).toContain("<name>pdf-processing</name>");
    const skill = first.tools.find((t: { function: { name: string } }) => t.function.name === "skill").function;
    expect(skill.parameters.properties.name.enum).toContain("pdf-processing");
    const result = toolResults(1)[0]!;
    expect(result).toMatch(new RegExp(`^<skill name="pdf-processing" dir="${join(dirs.workspace, ".agents", "skills", "pdf-processing")}">`));
    expect(result).toContain(BODY);
    expect(result).toContain("resources:\n- references/forms.md");
    expect(rows.map((row) => row.kind)).toEqual(["user", "skill", "assistant"]);
    expect(rows[1]).toMatchObject({ skill: "pdf-processing", via: "tool", already_loaded: false, text: expect.stringMatching(/^used skill pdf-processing · \d+ B$/) });
  });

  it("a second pull in the conversation returns 'already loaded' and still draws its row", async () => {
    await turn("first", [call("skill", { name: "pdf-processing" }), prose("ok")]);
    const { rows } = await turn("again", [call("skill", { name: "pdf-processing" }), prose("ok")]);
    expect(rows.find((row) => row.kind === "skill")).toMatchObject({ already_loaded: true, via: "tool" });
    expect(toolResults(3).at(-1)).toMatch(/already loaded in this conversation/);
  });

  it("a pull from model-written Python draws a row via python, and a second returns the note to Python", async () => {
    const code = "a = await commands.pdf_processing('x')\nb = await commands.invoke('/pdf-processing', 'y')\nprint(a['instructions'][:16], '|', b['instructions'])";
    const { rows } = await turn("use python", [call("python", { code }), prose("ok")], { mode: "code" });
    expect(rows.filter((row) => row.kind === "skill")).toEqual([
      expect.objectContaining({ via: "python", already_loaded: false }),
      expect.objectContaining({ via: "python", already_loaded: true }),
    ]);
    expect(toolResults(1)[0]).toMatch(/^# PDF processing \| Skill pdf-processing is already loaded in this conversation/);
  });

  it("outside a turn, Python gets the full activation every time", async () => {
    const future = session.execute("r = [await commands.pdf_processing('x') for _ in range(2)]\nprint(all(x['instructions'].startswith('# PDF') for x in r))");
    let out = "";
    future.onOutput((o) => (out += (o.content as { text?: string }).text ?? ""));
    await future.done;
    expect(out).toBe("True\n");
  });

  it("a user slash activation draws a row via user; a repeat sends the note in the activation block", async () => {
    const activation = await session.activate("pdf-processing", "go");
    const block = JSON.stringify({ skill_activation: { command: "/pdf-processing", name: "pdf-processing", source: activation.source, arguments: "go", instructions: activation.instructions } });
    const request = { visibleText: "/pdf-processing go", modelInput: block, activation: { command: "/pdf-processing", activation } };
    const first = await turn("", [prose("ok")], { request });
    expect(first.rows[1]).toMatchObject({ kind: "skill", via: "user", already_loaded: false });
    expect(server.requests[0]!.body.messages.at(-1).content).toContain(BODY.split("\n")[0]);
    const second = await turn("", [prose("ok")], { request });
    expect(second.rows[1]).toMatchObject({ kind: "skill", via: "user", already_loaded: true });
    expect(server.requests[1]!.body.messages.at(-1).content).toMatch(/already loaded/);
  });
});

describe("O-3 the python tool", () => {
  it("returns stdout, stderr, the result and the error, and draws code and output rows", async () => {
    const code = "import sys\nprint('out')\nprint('err', file=sys.stderr)\n1/0";
    const { rows } = await turn("run", [call("python", { code }), prose("ok")], { mode: "code" });
    const result = toolResults(1)[0]!;
    expect(result).toMatch(/out\n[\s\S]*err\n[\s\S]*ZeroDivisionError/);
    expect(result).not.toMatch(/\x1b\[/);
    expect(rows.map((r) => r.kind)).toEqual(["user", "code", "output", "assistant"]);
    expect(rows[2]).toMatchObject({ kind: "output", status: "error", truncated: false });
  });

  it("cuts a long result at MAX_TOOL_RESULT_BYTES with a note", async () => {
    const { rows } = await turn("run", [call("python", { code: "print('x' * 100_000)" }), prose("ok")], { mode: "code" });
    const result = toolResults(1)[0]!;
    expect(Buffer.byteLength(result)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
    expect(result).toMatch(/\[albedo: [\d.]+ KB more left out/);
    expect(rows.find((r) => r.kind === "output")).toMatchObject({ truncated: true });
  });

  it("an interrupt ends the turn as interrupted and the cell stops; the conversation stays well formed", async () => {
    const controller = new AbortController();
    const printed: string[] = [];
    const code = "import time\nprint('sleeping', flush=True)\ntime.sleep(30)";
    const running = turn("sleep", [call("python", { code })], { mode: "code", signal: controller.signal, host: printingHost(printed) });
    await poll(() => printed.join("").includes("sleeping"), { what: "the cell to print 'sleeping'" });
    controller.abort();
    const { end, rows } = await running;
    expect(end).toEqual({ result: "interrupted" });
    expect(rows.at(-1)).toEqual({ kind: "notice", text: "interrupted" });
    // What it printed before the interrupt is in the transcript, and the model is told the call ran (not "Not run").
    expect(rows.at(-2)).toMatchObject({ kind: "output", status: "error", text: expect.stringMatching(/^sleeping\n[\s\S]*KeyboardInterrupt/) });
    const last = state.turns.at(-1)!.messages;
    expect(last.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_python" });
    expect(last.at(-1)!.content).toMatch(/^Interrupted by the user while it ran\. Whatever it did before then took effect\.\nIts output until then:\nsleeping\n[\s\S]*KeyboardInterrupt/);
    expect(last.filter((m) => m.role === "tool")).toHaveLength(1);
    const after = await turn("next", [prose("fine")]);
    expect(after.end).toEqual({ result: "completed", reply: "fine" });
  });

  it("a cell that outlives the interrupt ends the turn with a notice that it still runs, and the next python call waits for it", async () => {
    const controller = new AbortController();
    const ready = join(dirs.workspace, "stubborn.ready");
    // Ignores SIGINT for 3 s (as code in a call that never checks for signals would), well past
    // TURN_INTERRUPT_TIMEOUT_MS after the interrupt; it says when it is past the point of no return.
    const code = [
      "import signal, time",
      "previous = signal.signal(signal.SIGINT, signal.SIG_IGN)",
      "try:",
      "    print('stubborn', flush=True)",
      `    open(${JSON.stringify(ready)}, 'w').close()`,
      "    time.sleep(3)",
      "finally:",
      "    signal.signal(signal.SIGINT, previous)",
      "left = 'by the stubborn cell'",
      "print('done at last', flush=True)",
    ].join("\n");
    const running = turn("stubborn", [call("python", { code })], { mode: "code", signal: controller.signal });
    await poll(() => existsSync(ready));
    controller.abort();
    const { end, rows } = await running;
    expect(end).toEqual({ result: "interrupted" });
    const stillRuns = /the cell was still running 1 s after the interrupt and runs on in the kernel; the next python call waits for it to end/;
    expect(rows.at(-1)).toEqual({ kind: "notice", text: expect.stringMatching(new RegExp(`^interrupted: ${stillRuns.source}$`)) });
    expect(rows.at(-2)).toMatchObject({ kind: "output", status: "error", text: "stubborn\n" });
    const told = state.turns.at(-1)!.messages.at(-1)!;
    expect(told).toMatchObject({ role: "tool", tool_call_id: "call_python" });
    expect(told.content).toMatch(stillRuns);
    expect(told.content).not.toMatch(/done at last/);
    // The next turn's cell runs once the stubborn one has ended, and sees what it left.
    const after = await turn("next", [call("python", { code: "print(left)" }), prose("fine")], { mode: "code" });
    expect(after.end).toEqual({ result: "completed", reply: "fine" });
    expect(toolResults(2).at(-1)).toBe("by the stubborn cell\n");
  });
});

describe("O-3 bad model output", () => {
  it("malformed arguments, an unknown tool and a skill outside the enum each get an error result and an error row; the turn goes on", async () => {
    const { end, rows } = await turn("x", [call("python", "{not json"), call("shell", { cmd: "ls" }), call("skill", { name: "nope" }), prose("gave up")]);
    expect(end).toEqual({ result: "completed", reply: "gave up" });
    expect(rows.filter((r) => r.kind === "error").map((r) => (r as { text: string }).text)).toEqual([
      expect.stringMatching(/arguments of python are not valid JSON/),
      expect.stringMatching(/there is no tool "shell"/),
      expect.stringMatching(/invalid arguments for skill: .*name/),
    ]);
  });

  it("a runaway loop ends as failed at MAX_TURN_STEPS, keeping the input in the conversation", async () => {
    const replies = Array.from({ length: MAX_TURN_STEPS }, (_, i) => call("python", { code: "pass" }, `c${i}`));
    const { end } = await turn("loop", replies, { mode: "code" });
    expect(end).toMatchObject({ result: "failed", error: expect.stringMatching(/MAX_TURN_STEPS/) });
    expect(state.turns.at(-1)!.messages[0]).toEqual({ role: "user", content: "loop" });
  });

  it("an HTTP error ends the turn as failed with the reason; the next turn still works", async () => {
    const { end, rows } = await turn("x", [{ kind: "status", status: 400, body: '{"error": {"message": "bad model"}}' }]);
    expect(end).toMatchObject({ result: "failed", error: expect.stringMatching(/bad model/) });
    expect(rows.at(-1)).toMatchObject({ kind: "error" });
    expect((await turn("y", [prose("ok")])).end.result).toBe("completed");
    expect(server.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content)).toEqual(["x", "y"]);
  });
});

describe("O-3 O-7 a model endpoint that misbehaves", () => {
  /** One turn with `replies` queued on an adapter made with `options`; returns its end. */
  async function turnWith(options: Parameters<typeof openaiAdapter>[1], replies: FakeReply[], baseUrl?: string): Promise<TurnEnd> {
    const saved = adapter;
    adapter = baseUrl ? await createAdapter(openaiSettings(baseUrl), ENV, options) : await openaiAdapter(server, options);
    try {
      return (await turn("hello", replies)).end;
    } finally {
      adapter = saved;
    }
  }

  it("429 then an answer: retried, the turn completes", async () => {
    expect(await turnWith({}, [{ kind: "status", status: 429, body: "{}", headers: { "retry-after": "0" } }, prose("after retry")])).toEqual({ result: "completed", reply: "after retry" });
  });

  it("a wait the server asks for is a notice row, in the turn and in its compaction; a day's wait fails the turn at once, naming the bound", async () => {
    const wait = { kind: "status", status: 429, body: "{}", headers: { "retry-after": "1" } } as const;
    const told = await turn("hello", [wait, prose("after the wait")]);
    expect(told.end).toEqual({ result: "completed", reply: "after the wait" });
    expect(told.rows.filter((row) => row.kind === "notice").map((row) => row.text)).toEqual([expect.stringMatching(/answered HTTP 429 and asked to wait 1 s before trying again; waiting \(attempt 2 of 3\)/)]);
    for (const word of ["one", "two", "three"]) await turn(`${word} ${"padding ".repeat(400)}`, [prose(`answer ${word}`)], { contextTokens: 100_000 });
    const compacted = await turn("now", [wait, prose("A summary."), prose("done")], { contextTokens: 2_500 });
    expect(compacted.rows.filter((row) => row.kind === "notice").map((row) => row.text)).toEqual([expect.stringMatching(/asked to wait 1 s/), expect.stringMatching(/earlier turns were summarised/)]);
    const refused = await turn("again", [{ kind: "status", status: 429, body: "{}", headers: { "retry-after": "86400" } }]);
    expect(refused.end).toMatchObject({ result: "failed", error: expect.stringContaining("longer than MODEL_MAX_RETRY_WAIT_MS") });
  });

  it("500 every time: failed after the retries, with the reason", async () => {
    const end = await turnWith({ maxRetries: 1 }, [{ kind: "status", status: 500, body: '{"error":{"message":"boom"}}' }, { kind: "status", status: 500, body: '{"error":{"message":"boom"}}' }]);
    expect(end).toMatchObject({ result: "failed", error: expect.stringMatching(/boom/) });
  });

  it("a hang: failed at the request deadline", async () => {
    expect(await turnWith({ requestTimeoutMs: 300, maxRetries: 0 }, [{ kind: "hang" }])).toMatchObject({ result: "failed", error: expect.stringMatching(/time/i) });
  });

  it("a stream cut mid-reply, a huge reply, an unreachable URL: each fails the turn with its reason", async () => {
    expect(await turnWith({ maxRetries: 0 }, [{ kind: "partial", text: "one two three four", deltas: 2, then: "destroy" }])).toMatchObject({ result: "failed" });
    expect(await turnWith({ maxReplyBytes: 1024 }, [{ kind: "huge", bytes: 64 * 1024, as: "deltas" }])).toMatchObject({ result: "failed", error: expect.stringMatching(/MAX_MODEL_REPLY_BYTES|bytes/) });
    expect(await turnWith({ maxRetries: 0 }, [], `http://127.0.0.1:${await closedPort()}/v1`)).toMatchObject({ result: "failed", error: expect.stringMatching(/refused|reach/i) });
  });

  it("keeps every failed input in the conversation, so the next turn sees them", async () => {
    await turnWith({ maxRetries: 0 }, [{ kind: "status", status: 400, body: "{}" }]);
    await turn("next", [prose("ok")]);
    const users = server.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content);
    expect(users).toEqual(["hello", "next"]);
  });
});

describe("O-5 the read tool", () => {
  it("reads the workspace and loaded skills' folders; refuses what lies outside, through links too", async () => {
    const skillDir = join(dirs.workspace, ".agents", "skills", "pdf-processing");
    await turn("load", [call("skill", { name: "pdf-processing" }), prose("ok")]);
    server.requests.length = 0;
    await turn("read", [
      { kind: "reply", toolCalls: [
        { id: "a", name: "read", arguments: JSON.stringify({ path: "notes.txt" }) },
        { id: "b", name: "read", arguments: JSON.stringify({ path: join(skillDir, "references", "forms.md") }) },
        { id: "c", name: "read", arguments: JSON.stringify({ path: "/etc/hostname" }) },
        { id: "d", name: "read", arguments: JSON.stringify({ path: "sneaky.txt" }) },
      ] },
      prose("ok"),
    ]);
    const [notes, forms, etc, sneaky] = toolResults(1).slice(-4);
    expect(notes).toMatch(/^\[notes.txt: bytes 0-16 of 16\]\nworkspace notes\n$/);
    expect(forms).toContain("Use the form tool.");
    expect(etc).toMatch(/^Refused: .* is outside the workspace/);
    expect(sneaky).toMatch(/^Refused:/);
  });
});

describe("O-4 message[0] stays the same between turns", () => {
  it("is byte-identical across turns of one view", async () => {
    await turn("a", [prose("1")]);
    await turn("b", [prose("2")]);
    expect(server.requests[0]!.body.messages[0]).toEqual(server.requests[1]!.body.messages[0]);
  });
});

describe("O-8 compaction", () => {
  it("summarises older turns past the budget, says so in a notice, and keeps a loaded skill verbatim", async () => {
    await turn("load it", [call("skill", { name: "pdf-processing" }), prose("loaded")]);
    for (const word of ["one", "two", "three"]) await turn(`${word} ${"padding ".repeat(400)}`, [prose(`answer ${word}`)], { contextTokens: 100_000 });
    server.requests.length = 0;
    const { rows } = await turn("now", [prose("A summary of the earlier work."), prose("done")], { contextTokens: 2_500 });
    expect(rows.find((r) => r.kind === "notice")).toMatchObject({ text: expect.stringMatching(/earlier turns were summarised/) });
    expect(server.requests[0]!.body.tools).toBeUndefined();
    const sent = server.requests[1]!.body.messages as { role: string; content: string }[];
    expect(sent[0]!.role).toBe("system");
    expect(sent[1]!.content).toMatch(/summarised to fit the model's context\]\n\nA summary of the earlier work\./);
    expect(sent[1]!.content).toContain(BODY);
    expect(state.turns[0]!.summary).toBe(true);
  });
});

