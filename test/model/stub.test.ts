import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CONTEXT_TOKENS, IMAGES_OF_CALL_PREFIX, MAX_STUB_SCRIPT_BYTES, createAdapter, type ChatMessage, type ModelAdapter, type ModelSettings } from "../../src/model/index.js";
import { tempDirs } from "../support/tempDirs.js";
import { modelFailure, request } from "./support.js";
import { installDir } from "../../src/platform/index.js";

const dirs = tempDirs("albedo-model-stub-");
afterAll(() => dirs.cleanup());

function stubSettings(script: string | undefined, extra: Partial<ModelSettings> = {}): ModelSettings {
  return { provider: "stub", script, mode: "code", contextTokens: DEFAULT_CONTEXT_TOKENS, images: true, ...extra };
}

/** Writes `content` (a value as JSON, or text as it is) to a fresh script file and returns its path. */
function scriptFile(content: unknown): string {
  const file = join(dirs.make(), "script.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

function stubAdapter(content: unknown): Promise<ModelAdapter> {
  return createAdapter(stubSettings(scriptFile(content)), {});
}

const USER: ChatMessage[] = [{ role: "user", content: "go" }];

/** The history after the model called `name` with id `id` and got `result`. */
function afterTool(name: string, id: string, result = "done"): ChatMessage[] {
  return [...USER, { role: "assistant", content: "", tool_calls: [{ id, name, arguments: "{}" }] }, { role: "tool", tool_call_id: id, content: result }];
}

describe("O-7 stub adapter: replay", () => {
  it("replays replies in order: prose, tool calls (object arguments as JSON, string arguments as sent), usage", async () => {
    const adapter = await stubAdapter({
      replies: [
        { text: "first", usage: { prompt_tokens: 10, completion_tokens: 1 } },
        { tool_calls: [{ name: "python", arguments: { code: "print(1)" } }, { id: "mine", name: "python", arguments: '{"code": "unterminated' }] },
        { text: "cut", finish_reason: "length" },
      ],
    });
    expect(await adapter.complete(request())).toEqual({ text: "first", toolCalls: [], finishReason: "stop", usage: { promptTokens: 10, completionTokens: 1 } });
    expect(await adapter.complete(request())).toEqual({
      text: "",
      toolCalls: [
        { id: "stub_2_1", name: "python", arguments: '{"code":"print(1)"}' },
        { id: "mine", name: "python", arguments: '{"code": "unterminated' },
      ],
      finishReason: "tool_calls",
    });
    expect((await adapter.complete(request())).finishReason).toBe("length");
  });

  it("streams prose through onText word by word", async () => {
    const text = "  Streaming  without a network,\nword by word. ";
    const adapter = await stubAdapter({ replies: [{ text }] });
    const deltas: string[] = [];
    const reply = await adapter.complete(request({ onText: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(["  Streaming", "  without", " a", " network,", "\nword", " by", " word.", " "]);
    expect(deltas.join("")).toBe(reply.text);
  });

  it("raises script_exhausted, naming the file, once every reply is used", async () => {
    const file = scriptFile({ replies: [{ text: "only one" }] });
    const adapter = await createAdapter(stubSettings(file), {});
    await adapter.complete(request());
    const error = await modelFailure(adapter.complete(request()));
    expect(error.kind).toBe("script_exhausted");
    expect(error.message).toContain(file);
    expect(error.message).toContain("call 2");
  });

  it("answers a tool result with an expect_tool reply, and refuses one that does not fit", async () => {
    const adapter = await stubAdapter({ replies: [{ expect_tool: "python", text: "saw python" }, { expect_tool: "python", text: "never" }] });
    expect((await adapter.complete(request({ messages: afterTool("python", "c1") }))).text).toBe("saw python");
    const error = await modelFailure(adapter.complete(request({ messages: afterTool("skill", "c2") })));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain("expects to answer a result of python, but the request ends with a result of skill");
  });

  it("I-2 looks past the user message carrying a python step's images to the result before it; any other user message still refuses", async () => {
    const adapter = await stubAdapter({ replies: [{ expect_tool: "python", text: "saw the plot" }, { expect_tool: "python", text: "never" }] });
    const image = { mime: "image/png", data: "iVBORw0KGgo=", width: 8, height: 8 };
    const images: ChatMessage = { role: "user", content: `${IMAGES_OF_CALL_PREFIX}c1: [image 1 · 8×8 PNG · 75 B]`, images: [image] };
    expect((await adapter.complete(request({ messages: [...afterTool("python", "c1"), images] }))).text).toBe("saw the plot");
    const other: ChatMessage = { role: "user", content: `${IMAGES_OF_CALL_PREFIX}c1: [image 1 · 8×8 PNG · 75 B]\nand a question`, images: [image] };
    const error = await modelFailure(adapter.complete(request({ messages: [...afterTool("python", "c2"), other] })));
    expect(error.message).toContain("expects to answer a result of python, but the request ends with a user message");
  });

  it("stops with interrupted when the signal is aborted between words", async () => {
    const adapter = await stubAdapter({ replies: [{ text: "one two three four", delay_ms: 10_000 }] });
    const controller = new AbortController();
    const seen: string[] = [];
    const call = adapter.complete(request({ signal: controller.signal, onText: (delta) => seen.push(delta) }));
    setTimeout(() => controller.abort(), 50);
    const error = await modelFailure(call);
    expect(error.kind).toBe("interrupted");
    expect(seen).toEqual([]);
  });

  it("describes itself as the stub", async () => {
    const adapter = await createAdapter(stubSettings(scriptFile({ replies: [{ text: "x" }] }), { mode: "tool" }), {});
    expect(adapter.describe()).toEqual({ provider: "stub", model: "stub", mode: "tool", contextTokens: DEFAULT_CONTEXT_TOKENS });
  });
});

describe("O-7 stub adapter: bad scripts are config errors naming the file", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ["invalid JSON", "{ replies: [", /is not valid JSON/],
    ["not an object", [{ text: "x" }], /does not fit the stub format/],
    ["no replies", { replies: [] }, /at replies/],
    ["a reply with neither text nor tool calls", { replies: [{ comment: "empty" }] }, /needs text, tool_calls or both/],
    ["an unknown field (a typo)", { replies: [{ txt: "x" }] }, /at replies\.0/],
    ["a tool call without a name", { replies: [{ tool_calls: [{ arguments: {} }] }] }, /at replies\.0\.tool_calls\.0\.name/],
    ["a delay over MAX_STUB_DELAY_MS", { replies: [{ text: "x", delay_ms: 60_000 }] }, /at replies\.0\.delay_ms/],
  ];
  for (const [label, content, pattern] of cases) {
    it(label, async () => {
      const file = scriptFile(content);
      const error = await modelFailure(createAdapter(stubSettings(file), {}));
      expect(error.kind).toBe("config");
      expect(error.message).toContain(file);
      expect(error.message).toMatch(pattern);
    });
  }

  it("a missing file", async () => {
    const file = join(dirs.make(), "nope.json");
    const error = await modelFailure(createAdapter(stubSettings(file), {}));
    expect(error).toMatchObject({ kind: "config", message: expect.stringContaining(`${file} (model.script) does not exist`) });
  });

  it("a FIFO, refused without blocking", async () => {
    const file = join(dirs.make(), "fifo.json");
    execFileSync("mkfifo", [file]);
    const error = await modelFailure(createAdapter(stubSettings(file), {}));
    expect(error).toMatchObject({ kind: "config", message: expect.stringContaining("not a regular file") });
  });

  it("a file over MAX_STUB_SCRIPT_BYTES, refused rather than cut", async () => {
    const text = JSON.stringify({ replies: [{ text: "x".repeat(MAX_STUB_SCRIPT_BYTES) }] });
    const error = await modelFailure(createAdapter(stubSettings(scriptFile(text)), {}));
    expect(error).toMatchObject({ kind: "config", message: expect.stringContaining("MAX_STUB_SCRIPT_BYTES") });
  });

  it("no script setting at all", async () => {
    const error = await modelFailure(createAdapter(stubSettings(undefined), {}));
    expect(error).toMatchObject({ kind: "config", message: expect.stringContaining("model.script is not set") });
  });
});

describe("O-7 stub adapter: the shipped example", () => {
  const example = join(installDir(), "priv", "model", "stub-example.json");

  it("pulls a built-in skill with the skill tool, runs Python, then answers in prose", async () => {
    const adapter = await createAdapter(stubSettings(example, { mode: "tool" }), {});
    const pull = await adapter.complete(request({ messages: USER }));
    expect(pull.toolCalls).toEqual([{ id: "stub_1_1", name: "skill", arguments: '{"name":"research"}' }]);
    const skill = JSON.parse(pull.toolCalls[0]?.arguments ?? "{}") as { name: string };
    expect(existsSync(join(installDir(), "priv", "skills", skill.name, "SKILL.md"))).toBe(true);
    const python = await adapter.complete(request({ messages: afterTool("skill", "stub_1_1") }));
    expect(python.toolCalls.map((call) => call.name)).toEqual(["python"]);
    expect(JSON.parse(python.toolCalls[0]?.arguments ?? "{}")).toHaveProperty("code");
    const answer = await adapter.complete(request({ messages: afterTool("python", "stub_2_1") }));
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text.length).toBeGreaterThan(0);
  });
});
