import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BUILTIN_COMMANDS, describeResult } from "../../src/commands/index.js";
import { usageLine, type ChatMessage, type ToolSpec } from "../../src/model/index.js";
import { startFakeAnthropic, type FakeAnthropic } from "./fakeAnthropic.js";
import { startFakeOpenAI } from "./fakeOpenAI.js";
import { anthropicAdapter, openaiAdapter, request } from "./support.js";

let server: FakeAnthropic;
beforeEach(async () => {
  server = await startFakeAnthropic();
});
afterEach(async () => {
  await server.close();
});

const TOOLS: ToolSpec[] = [
  { name: "python", description: "Run Python in the session kernel.", parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] } },
  { name: "skill", description: "Load a skill.", parameters: { type: "object", properties: { name: { type: "string", enum: ["pdf"] } }, required: ["name"] } },
];
const SYSTEM: ChatMessage = { role: "system", content: "message[0]: the catalog, the tools, the rules." };
const MARK = '"cache_control":{"type":"ephemeral"}';

/** Everything before the `n`th mark (1-based), and that mark. */
function upToMark(raw: string, n: number): string {
  let at = -1;
  for (let seen = 0; seen < n; seen += 1) {
    at = raw.indexOf(MARK, at + 1);
    if (at < 0) throw new Error(`no mark ${n} in the request`);
  }
  return raw.slice(0, at + MARK.length);
}

const withoutMarks = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll(`,${MARK}`, ""));

describe("O-10 anthropic adapter: prompt caching", () => {
  it("marks the last tool, the system block and the newest history block; two turns of one conversation send identical bytes up to the first mark and through the stable prefix", async () => {
    const adapter = await anthropicAdapter(server);
    const first: ChatMessage[] = [SYSTEM, { role: "user", content: "plot the data" }];
    server.enqueue({ kind: "reply", toolUses: [{ id: "toolu_1", name: "python", input: '{"code":"plot()"}' }] }, { kind: "reply", text: "Plotted." }, { kind: "reply", text: "Again." });
    const step1 = await adapter.complete(request({ messages: first, tools: TOOLS }));
    const afterCall: ChatMessage[] = [...first, { role: "assistant", content: "", tool_calls: step1.toolCalls }, { role: "tool", tool_call_id: "toolu_1", content: "done" }];
    const step2 = await adapter.complete(request({ messages: afterCall, tools: TOOLS }));
    const secondTurn: ChatMessage[] = [...afterCall, { role: "assistant", content: step2.text }, { role: "user", content: "and again" }];
    await adapter.complete(request({ messages: secondTurn, tools: TOOLS }));

    const [one, two, three] = server.requests.map((sent) => sent.raw);
    for (const raw of [one!, two!, three!]) expect(raw.split(MARK)).toHaveLength(3 + 1);
    // The first mark ends the tool list; the second, message[0]: the prefix every request of the conversation shares.
    expect(upToMark(two!, 1)).toBe(upToMark(one!, 1));
    expect(upToMark(three!, 1)).toBe(upToMark(one!, 1));
    expect(upToMark(three!, 2)).toBe(upToMark(one!, 2));
    expect(upToMark(one!, 2).endsWith(`${JSON.stringify(SYSTEM.content)},${MARK}`)).toBe(true);
    // The history grows at its end only: each request's messages begin with the last one's, its mark moved to the newest block.
    const messagesOf = (index: number) => server.requests[index]!.body.messages as unknown[];
    expect(withoutMarks(messagesOf(1).slice(0, messagesOf(0).length))).toEqual(withoutMarks(messagesOf(0)));
    expect(withoutMarks(messagesOf(2).slice(0, messagesOf(1).length))).toEqual(withoutMarks(messagesOf(1)));
    expect(JSON.stringify(messagesOf(2).at(-1))).toContain(MARK);
  });

  it("sends no more marks than the API's four when there are no tools or system", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    await (await anthropicAdapter(server)).complete(request({ messages: [{ role: "user", content: "hi" }] }));
    const [sent] = server.requests;
    expect(sent?.body).not.toHaveProperty("tools");
    expect(sent?.body).not.toHaveProperty("system");
    expect(sent!.raw.split(MARK)).toHaveLength(2);
  });
});

describe("O-10 usage: input, output, cache read and cache write tokens", () => {
  it("reports the whole prompt (uncached input + cache reads + cache writes) and each cache count, the end's counts replacing the start's", async () => {
    server.enqueue({
      kind: "reply",
      text: "ok",
      usage: { input_tokens: 20, output_tokens: 1, cache_read_input_tokens: 1_000, cache_creation_input_tokens: 300 },
      finalUsage: { output_tokens: 42, cache_creation_input_tokens: 310 },
    });
    const reply = await (await anthropicAdapter(server)).complete(request());
    expect(reply.usage).toEqual({ promptTokens: 20 + 1_000 + 310, completionTokens: 42, cacheReadTokens: 1_000, cacheWriteTokens: 310 });
  });

  it("reports the usage of a plain JSON message", async () => {
    server.enqueue({ kind: "reply", text: "ok", format: "json", usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 7 } });
    const reply = await (await anthropicAdapter(server)).complete(request());
    expect(reply.usage).toEqual({ promptTokens: 12, completionTokens: 2, cacheReadTokens: 7, cacheWriteTokens: 0 });
  });

  it("the openai adapter reports prompt_tokens_details.cached_tokens as cache reads", async () => {
    const openai = await startFakeOpenAI();
    try {
      openai.enqueue({ kind: "reply", text: "ok", usage: { prompt_tokens: 1_200, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 1_024 } } });
      const reply = await (await openaiAdapter(openai)).complete(request());
      expect(reply.usage).toEqual({ promptTokens: 1_200, completionTokens: 3, cacheReadTokens: 1_024 });
    } finally {
      await openai.close();
    }
  });
});

describe("O-10 usage totals for people", () => {
  const totals = { input_tokens: 2_470, output_tokens: 13, cache_read_tokens: 900, cache_write_tokens: 1_500, model_calls: 2 };

  it("one line: input with its cache reads and writes, output, calls; no cache part when nothing was cached", () => {
    expect(usageLine(totals)).toBe("usage: 2,470 input tokens (900 read from cache, 1,500 written to it), 13 output, 2 model calls");
    expect(usageLine({ ...totals, cache_read_tokens: 0, cache_write_tokens: 0, model_calls: 1 })).toBe("usage: 2,470 input tokens, 13 output, 1 model call");
  });

  it("/status shows the session's usage on its own line once a turn reported some", () => {
    const status = BUILTIN_COMMANDS.find((command) => command.name === "/status");
    const value = { id: "s1", kernel: "idle", sandbox: "bwrap", revision: "abc", skills: 1, extensions: {} };
    const text = describeResult(status, { ...value, usage: totals });
    expect(text).toMatch(/^usage +2,470 input tokens/m);
    // The row wraps at the terminal's width; its words are all there.
    expect(text.replace(/\s+/g, " ")).toContain("usage 2,470 input tokens (900 read from cache, 1,500 written to it), 13 output, 2 model calls");
    expect(describeResult(status, { ...value, usage: null })).not.toContain("usage");
  });
});

