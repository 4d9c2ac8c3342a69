import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MAX_TOKENS, createAdapter, type ChatMessage } from "../../src/model/index.js";
import { words } from "./fakeOpenAI.js";
import { startFakeAnthropic, type FakeAnthropic } from "./fakeAnthropic.js";
import { anthropicAdapter, anthropicSettings, KEY, KEY_ENV, modelFailure, request, PYTHON_TOOL } from "./support.js";

let server: FakeAnthropic;
beforeEach(async () => {
  server = await startFakeAnthropic();
});
afterEach(async () => {
  await server.close();
});

const TINY = { mime: "image/png", data: "iVBORw0KGgo=", width: 1, height: 1 } as const;

describe("O-10 anthropic adapter: prose and tool calls", () => {
  it("streams prose to onText in order through the real SDK, and reports the stop", async () => {
    const text = "Hello there, this is a streamed reply in several words.";
    server.enqueue({ kind: "reply", text, usage: { input_tokens: 12, output_tokens: 9 } });
    const deltas: string[] = [];
    const reply = await (await anthropicAdapter(server)).complete(request({ onText: (delta) => deltas.push(delta) }));
    expect(deltas).toEqual(words(text));
    expect(reply).toMatchObject({ text, toolCalls: [], finishReason: "stop" });
  });

  it("takes a plain JSON message from a server that ignores stream: true", async () => {
    server.enqueue({ kind: "reply", text: "Answered whole.", toolUses: [{ id: "toolu_j", name: "python", input: '{"code":"1+1"}' }], format: "json" });
    const deltas: string[] = [];
    const reply = await (await anthropicAdapter(server)).complete(request({ tools: [PYTHON_TOOL], onText: (delta) => deltas.push(delta) }));
    expect(reply).toMatchObject({ text: "Answered whole.", toolCalls: [{ id: "toolu_j", name: "python", arguments: '{"code":"1+1"}' }], finishReason: "tool_calls" });
    expect(deltas).toEqual(["Answered whole."]);
  });

  it("joins input_json_delta pieces per tool_use block, raw, beside the prose", async () => {
    const first = JSON.stringify({ code: "import sys\nprint(sys.version)" });
    const second = '{"code": "print(\'unterminated'; // malformed on purpose: passed through as sent
    server.enqueue({ kind: "reply", text: "Let me check.", toolUses: [{ id: "toolu_a", name: "python", input: first }, { id: "toolu_b", name: "python", input: second }], pieces: 7 });
    const reply = await (await anthropicAdapter(server)).complete(request({ tools: [PYTHON_TOOL] }));
    expect(reply).toMatchObject({
      text: "Let me check.",
      toolCalls: [
        { id: "toolu_a", name: "python", arguments: first },
        { id: "toolu_b", name: "python", arguments: second },
      ],
      finishReason: "tool_calls",
    });
  });

  it("reports length when the reply stopped at max_tokens in prose; max_tokens is DEFAULT_MAX_TOKENS when unset", async () => {
    server.enqueue({ kind: "reply", text: "Cut sh", stopReason: "max_tokens" });
    expect((await (await anthropicAdapter(server)).complete(request())).finishReason).toBe("length");
    expect(server.requests[0]?.body.max_tokens).toBe(DEFAULT_MAX_TOKENS);
  });
});

describe("O-10 anthropic adapter: what is sent", () => {
  it("sends system messages as the system param, tools with input_schema, results as tool_result blocks, streamed, capped by max_tokens", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const messages: ChatMessage[] = [
      { role: "system", content: "the manual" },
      { role: "user", content: "run it" },
      { role: "assistant", content: "", tool_calls: [{ id: "toolu_1", name: "python", arguments: '{"code":"1"}' }, { id: "toolu_2", name: "read", arguments: "{oops" }] },
      { role: "tool", tool_call_id: "toolu_1", content: "1" },
      { role: "tool", tool_call_id: "toolu_2", content: "Error: the arguments of read are not valid JSON; send one JSON object." },
      { role: "assistant", content: "It printed 1." },
      { role: "user", content: "thanks" },
    ];
    await (await anthropicAdapter(server, {}, { maxTokens: 1234 })).complete(request({ messages, tools: [PYTHON_TOOL] }));
    const [sent] = server.requests;
    expect(sent?.path).toBe("/v1/messages");
    expect(sent?.body).toMatchObject({ model: "claude-fake", max_tokens: 1234, stream: true });
    expect(sent?.body.system).toEqual([{ type: "text", text: "the manual", cache_control: { type: "ephemeral" } }]);
    expect(sent?.body.tools).toEqual([{ name: "python", description: PYTHON_TOOL.description, input_schema: PYTHON_TOOL.parameters, cache_control: { type: "ephemeral" } }]);
    expect(sent?.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "run it" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_1", name: "python", input: { code: "1" } },
          { type: "tool_use", id: "toolu_2", name: "read", input: { unparsed_arguments: "{oops" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "1" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "Error: the arguments of read are not valid JSON; send one JSON object.", is_error: true },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "It printed 1." }] },
      { role: "user", content: [{ type: "text", text: "thanks", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  it("I-2 puts a step's images inside the tool_result of the call they belong to", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const second = { ...TINY, data: "R0lGODlh" };
    const messages: ChatMessage[] = [
      { role: "user", content: "plot twice" },
      { role: "assistant", content: "", tool_calls: [{ id: "toolu_a", name: "python", arguments: "{}" }, { id: "toolu_b", name: "python", arguments: "{}" }, { id: "toolu_c", name: "python", arguments: "{}" }] },
      { role: "tool", tool_call_id: "toolu_a", content: "done\n1 image follows in the next message.", images: { labels: ["[image 1 · 1×1 PNG · 8 B]"], sent: [TINY] } },
      { role: "tool", tool_call_id: "toolu_b", content: "nothing to show" },
      { role: "tool", tool_call_id: "toolu_c", content: "done\n1 image follows in the next message.", images: { labels: ["[image 1 · 1×1 PNG · 6 B]"], sent: [second] } },
    ];
    await (await anthropicAdapter(server)).complete(request({ messages }));
    const image = (data: string) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } });
    expect(server.requests[0]?.body.messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_a", content: [{ type: "text", text: "done\n1 image follows in the next message." }, { type: "text", text: "Images of the python call toolu_a: [image 1 · 1×1 PNG · 8 B]" }, image(TINY.data)] },
        { type: "tool_result", tool_use_id: "toolu_b", content: "nothing to show" },
        {
          type: "tool_result",
          tool_use_id: "toolu_c",
          content: [{ type: "text", text: "done\n1 image follows in the next message." }, { type: "text", text: "Images of the python call toolu_c: [image 1 · 1×1 PNG · 6 B]" }, image(second.data)],
          cache_control: { type: "ephemeral" },
        },
      ],
    });
  });

  it("I-2 keeps images it cannot map to a call (a note changed the message) as image blocks in the user turn", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const messages: ChatMessage[] = [
      { role: "user", content: "plot" },
      { role: "assistant", content: "", tool_calls: [{ id: "toolu_a", name: "python", arguments: "{}" }] },
      { role: "tool", tool_call_id: "toolu_a", content: "done" },
      { role: "user", content: "Images of the python call toolu_a: [image 1 · 1×1 PNG · 8 B] [image 2 · 1×1 PNG · 8 B]\n[1 image of this message no longer sent]", images: [TINY] },
    ];
    await (await anthropicAdapter(server)).complete(request({ messages }));
    const last = server.requests[0]?.body.messages.at(-1);
    expect(last.content.map((block: { type: string }) => block.type)).toEqual(["tool_result", "text", "image"]);
    expect(last.content[0]).toEqual({ type: "tool_result", tool_use_id: "toolu_a", content: "done" });
  });

  it("I-2 a result whose older images are no longer sent keeps its line and the note beside the images it still sends", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const note = "[1 image of this message no longer sent: a request carries only the newest MAX_IMAGES_IN_CONTEXT (8) images of the conversation]";
    const messages: ChatMessage[] = [
      { role: "user", content: "plot" },
      { role: "assistant", content: "", tool_calls: [{ id: "toolu_a", name: "python", arguments: "{}" }] },
      { role: "tool", tool_call_id: "toolu_a", content: "done\n2 images follow in the next message.", images: { labels: ["[image 1 · 1×1 PNG · 8 B]", "[image 2 · 1×1 PNG · 8 B]"], sent: [TINY], notes: [note] } },
    ];
    await (await anthropicAdapter(server)).complete(request({ messages }));
    expect(server.requests[0]?.body.messages.at(-1).content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "toolu_a",
        content: [
          { type: "text", text: "done\n2 images follow in the next message." },
          { type: "text", text: `Images of the python call toolu_a: [image 1 · 1×1 PNG · 8 B] [image 2 · 1×1 PNG · 8 B]\n${note}` },
          { type: "image", source: { type: "base64", media_type: "image/png", data: TINY.data } },
        ],
        cache_control: { type: "ephemeral" },
      },
    ]);
  });

  it("sends the key in x-api-key only, to base_url only, and describes itself without it", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    const adapter = await anthropicAdapter(server, {}, { mode: "tool", contextTokens: 8192 });
    await adapter.complete(request());
    const [sent] = server.requests;
    expect(sent?.headers["x-api-key"]).toBe(KEY);
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.raw).not.toContain(KEY);
    expect(Object.entries(sent?.headers ?? {}).filter(([name, value]) => name !== "x-api-key" && String(value).includes(KEY))).toEqual([]);
    expect(adapter.describe()).toEqual({ provider: "anthropic", baseUrl: server.baseUrl, model: "claude-fake", mode: "tool", contextTokens: 8192 });
  });

  it("never reads the SDK's own ANTHROPIC_* variables from the process environment", async () => {
    const names = ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"];
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
    Object.assign(process.env, { ANTHROPIC_AUTH_TOKEN: "tok-ambient", ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_CUSTOM_HEADERS: "X-Ambient: yes\nX-Other: 1", ANTHROPIC_LOG: "debug" });
    try {
      server.enqueue({ kind: "reply", text: "ok" });
      await (await anthropicAdapter(server)).complete(request());
    } finally {
      for (const name of names) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    const [sent] = server.requests;
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.headers["x-ambient"]).toBeUndefined();
    expect(sent?.headers["x-other"]).toBeUndefined();
    expect(sent?.headers["x-api-key"]).toBe(KEY);
  });
});

describe("O-10 anthropic adapter: configuration", () => {
  it("reads the key from ANTHROPIC_API_KEY when api_key_env is unset, and defaults base_url to Anthropic's API", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    await (await createAdapter(anthropicSettings(server.baseUrl, { apiKeyEnv: undefined }), { ANTHROPIC_API_KEY: KEY })).complete(request());
    expect(server.requests[0]?.headers["x-api-key"]).toBe(KEY);
    const remote = await createAdapter(anthropicSettings(server.baseUrl, { baseUrl: undefined }), { [KEY_ENV]: KEY });
    expect(remote.describe().baseUrl).toBe("https://api.anthropic.com");
  });

  it("refuses a missing key variable with a config error before any request, naming the variable", async () => {
    const unset = await modelFailure(createAdapter(anthropicSettings(server.baseUrl, { apiKeyEnv: undefined }), {}));
    expect(unset.kind).toBe("config");
    expect(unset.message).toContain("ANTHROPIC_API_KEY");
    const named = await modelFailure(createAdapter(anthropicSettings(server.baseUrl), { ANTHROPIC_API_KEY: KEY }));
    expect(named.kind).toBe("config");
    expect(named.message).toContain(KEY_ENV);
    expect(server.requests).toHaveLength(0);
  });

  it("needs a model name", async () => {
    const error = await modelFailure(createAdapter(anthropicSettings(server.baseUrl, { name: undefined }), { [KEY_ENV]: KEY }));
    expect(error.kind).toBe("config");
    expect(error.message).toMatch(/model\.name/);
  });
});
