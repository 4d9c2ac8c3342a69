import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAdapter, type ChatMessage } from "../../src/model/index.js";
import { startFakeOpenAI, words, type FakeOpenAI } from "./fakeOpenAI.js";
import { KEY, modelFailure, openaiAdapter, openaiSettings, PYTHON_TOOL, request } from "./support.js";

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startFakeOpenAI();
});
afterEach(async () => {
  await server.close();
});


describe("O-7 openai adapter: prose", () => {
  it("streams prose to onText in order, as the server sends it", async () => {
    const text = "Hello there, this is a streamed reply in several words.";
    server.enqueue({ kind: "reply", text, usage: { prompt_tokens: 12, completion_tokens: 9 } });
    const deltas: string[] = [];
    const reply = await (await openaiAdapter(server)).complete(request({ onText: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(words(text));
    expect(reply).toEqual({ text, toolCalls: [], finishReason: "stop", usage: { promptTokens: 12, completionTokens: 9 } });
  });

  it("takes a plain JSON reply from a server that ignores stream: true, and still calls onText", async () => {
    server.enqueue({ kind: "reply", text: "Answered without streaming.", format: "json", usage: { prompt_tokens: 3, completion_tokens: 4 } });
    const deltas: string[] = [];
    const reply = await (await openaiAdapter(server)).complete(request({ onText: (delta) => deltas.push(delta) }));
    expect(reply).toEqual({ text: "Answered without streaming.", toolCalls: [], finishReason: "stop", usage: { promptTokens: 3, completionTokens: 4 } });
    expect(deltas).toEqual(["Answered without streaming."]);
  });

  it("reports length when the server cut the reply at its token limit", async () => {
    server.enqueue({ kind: "reply", text: "Cut sh", finishReason: "length" });
    const reply = await (await openaiAdapter(server)).complete(request());
    expect(reply.finishReason).toBe("length");
    expect(reply.usage).toBeUndefined();
  });
});

describe("O-7 openai adapter: tool calls", () => {
  it("joins tool-call arguments split across many chunks, per call index, raw", async () => {
    const first = JSON.stringify({ code: "import sys\nprint(sys.version)" });
    const second = '{"code": "print(\'unterminated'; // malformed on purpose: passed through as sent
    server.enqueue({
      kind: "reply",
      text: "Let me check.",
      toolCalls: [
        { id: "call_a", name: "python", arguments: first },
        { id: "call_b", name: "python", arguments: second },
      ],
      pieces: 7,
    });
    const reply = await (await openaiAdapter(server)).complete(request({ tools: [PYTHON_TOOL] }));
    expect(reply).toEqual({
      text: "Let me check.",
      toolCalls: [
        { id: "call_a", name: "python", arguments: first },
        { id: "call_b", name: "python", arguments: second },
      ],
      finishReason: "tool_calls",
    });
  });

  it("reads tool calls from a plain JSON reply", async () => {
    server.enqueue({ kind: "reply", toolCalls: [{ id: "call_j", name: "python", arguments: '{"code":"1+1"}' }], format: "json" });
    const reply = await (await openaiAdapter(server)).complete(request({ tools: [PYTHON_TOOL] }));
    expect(reply).toEqual({ text: "", toolCalls: [{ id: "call_j", name: "python", arguments: '{"code":"1+1"}' }], finishReason: "tool_calls" });
  });

  it("says tool_calls even when the server says stop beside its calls", async () => {
    server.enqueue({ kind: "reply", toolCalls: [{ name: "python", arguments: "{}" }], finishReason: "stop" });
    const reply = await (await openaiAdapter(server)).complete(request({ tools: [PYTHON_TOOL] }));
    expect(reply.finishReason).toBe("tool_calls");
  });
});

describe("O-7 openai adapter: what is sent", () => {
  it("sends the model, the messages in order, tools as functions, streaming with usage, and the key as a bearer token", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const messages: ChatMessage[] = [
      { role: "system", content: "the manual" },
      { role: "user", content: "run it" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_1", name: "python", arguments: '{"code":"1"}' }] },
      { role: "tool", tool_call_id: "call_1", content: "1" },
      { role: "assistant", content: "It printed 1." },
      { role: "user", content: "thanks" },
    ];
    await (await openaiAdapter(server)).complete(request({ messages, tools: [PYTHON_TOOL] }));
    const [sent] = server.requests;
    expect(sent?.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toMatchObject({ model: "fake-model", stream: true, stream_options: { include_usage: true } });
    expect(sent?.body.messages).toEqual([
      { role: "system", content: "the manual" },
      { role: "user", content: "run it" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "python", arguments: '{"code":"1"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "1" },
      { role: "assistant", content: "It printed 1." },
      { role: "user", content: "thanks" },
    ]);
    expect(sent?.body.tools).toEqual([{ type: "function", function: { name: "python", description: PYTHON_TOOL.description, parameters: PYTHON_TOOL.parameters } }]);
  });

  it("I-2 sends a step's results as text, then one user message naming each call's images, the notes on those not sent, and the images as data URLs", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const tiny = { mime: "image/png", data: "iVBORw0KGgo=", width: 1, height: 1 };
    const note = "[1 image not sent: model.images is false]";
    const messages: ChatMessage[] = [
      { role: "user", content: "plot twice" },
      { role: "assistant", content: "", tool_calls: [{ id: "call_a", name: "python", arguments: "{}" }, { id: "call_b", name: "python", arguments: "{}" }, { id: "call_c", name: "python", arguments: "{}" }] },
      { role: "tool", tool_call_id: "call_a", content: "done\n1 image follows in the next message.", images: { labels: ["[image 1 · 1×1 PNG · 8 B]"], sent: [tiny] } },
      { role: "tool", tool_call_id: "call_b", content: "nothing to show" },
      { role: "tool", tool_call_id: "call_c", content: "done\n1 image follows in the next message.", images: { labels: ["[image 1 · 1×1 PNG · 6 B]"], sent: [], notes: [note] } },
      { role: "user", content: "and now?" },
    ];
    await (await openaiAdapter(server)).complete(request({ messages }));
    expect(server.requests[0]?.body.messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "call_a", content: "done\n1 image follows in the next message." },
      { role: "tool", tool_call_id: "call_b", content: "nothing to show" },
      { role: "tool", tool_call_id: "call_c", content: "done\n1 image follows in the next message." },
      {
        role: "user",
        content: [
          { type: "text", text: `Images of the python call call_a: [image 1 · 1×1 PNG · 8 B]\nImages of the python call call_c: [image 1 · 1×1 PNG · 6 B]\n${note}` },
          { type: "image_url", image_url: { url: `data:image/png;base64,${tiny.data}` } },
        ],
      },
      { role: "user", content: "and now?" },
    ]);
  });

  it("sends no tools field when no tool is offered", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    await (await openaiAdapter(server)).complete(request());
    expect(server.requests[0]?.body).not.toHaveProperty("tools");
  });

  it("sends no Authorization header when api_key_env is unset (a local server without keys)", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const adapter = await createAdapter(openaiSettings(server.baseUrl, { apiKeyEnv: undefined }), { OPENAI_API_KEY: "sk-from-the-wrong-place" });
    await adapter.complete(request());
    expect(server.requests[0]?.authorization).toBeUndefined();
  });

  it("never reads the SDK's own OPENAI_* variables from the process environment", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { OPENAI_API_KEY: "sk-ambient", OPENAI_ADMIN_KEY: "sk-admin-ambient", OPENAI_ORG_ID: "org-ambient", OPENAI_PROJECT_ID: "proj-ambient", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    try {
      server.enqueue({ kind: "reply", text: "ok" });
      await (await openaiAdapter(server)).complete(request());
    } finally {
      for (const name of ["OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_BASE_URL"]) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    const [sent] = server.requests;
    expect(sent?.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.headers["openai-organization"]).toBeUndefined();
    expect(sent?.headers["openai-project"]).toBeUndefined();
  });

  it("describes itself without the key or its variable", async () => {
    const adapter = await openaiAdapter(server, {}, { mode: "tool", contextTokens: 8192 });
    expect(adapter.describe()).toEqual({ provider: "openai", baseUrl: server.baseUrl, model: "fake-model", mode: "tool", contextTokens: 8192 });
  });
});

describe("O-7 openai adapter: configuration", () => {
  it("refuses a missing key variable before any request", async () => {
    const error = await modelFailure(createAdapter(openaiSettings(server.baseUrl), {}));
    expect(error.kind).toBe("config");
    expect(error.message).toContain("ALBEDO_TEST_MODEL_KEY");
    expect(server.requests).toHaveLength(0);
  });

  it("refuses an empty key, and a key an HTTP header cannot carry, without quoting it", async () => {
    const empty = await modelFailure(createAdapter(openaiSettings(server.baseUrl), { ALBEDO_TEST_MODEL_KEY: "  " }));
    expect(empty.kind).toBe("config");
    const broken = await modelFailure(createAdapter(openaiSettings(server.baseUrl), { ALBEDO_TEST_MODEL_KEY: "sk-part one\nsk-part-two" }));
    expect(broken.kind).toBe("config");
    expect(broken.message).not.toContain("sk-part");
    expect(server.requests).toHaveLength(0);
  });

  it("needs a model name", async () => {
    const error = await modelFailure(createAdapter(openaiSettings(server.baseUrl, { name: undefined }), {}));
    expect(error.kind).toBe("config");
    expect(error.message).toMatch(/model\.name/);
  });

  it("defaults base_url to OpenAI's API", async () => {
    const adapter = await createAdapter(openaiSettings(server.baseUrl, { baseUrl: undefined }), { ALBEDO_TEST_MODEL_KEY: KEY });
    expect(adapter.describe().baseUrl).toBe("https://api.openai.com/v1");
  });
});
