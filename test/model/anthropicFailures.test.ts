import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_TOOL_ARGUMENT_DEPTH, MODEL_MAX_RETRY_WAIT_MS, type ModelLogger } from "../../src/model/index.js";
import { errorBody, event, startFakeAnthropic, type FakeAnthropic } from "./fakeAnthropic.js";
import { anthropicAdapter, expectNoKey, KEY, modelFailure, request, PYTHON_TOOL } from "./support.js";

let server: FakeAnthropic;
beforeEach(async () => {
  server = await startFakeAnthropic();
});
afterEach(async () => {
  await server.close();
});

/** No wait between retries: the tests check what is retried, not the SDK's back-off. */
const NOW = { "retry-after": "0" };
const overloaded = { kind: "status", status: 529, headers: NOW, body: JSON.stringify(errorBody("overloaded_error", "Overloaded")) } as const;

describe("O-10 anthropic adapter: bad input from the server", () => {
  it("retries an overloaded_error (529) with the SDK's own retries, then fails with the server's reason", async () => {
    server.enqueue(overloaded, overloaded);
    const error = await modelFailure((await anthropicAdapter(server, { maxRetries: 1 })).complete(request()));
    expect(error).toMatchObject({ kind: "http", status: 529 });
    expect(error.message).toContain("Overloaded");
    expect(error.message).toContain("after 2 attempts");
    expect(server.requests).toHaveLength(2);
  });

  it("succeeds when the server is no longer overloaded on the retry", async () => {
    server.enqueue(overloaded, { kind: "reply", text: "second time lucky" });
    expect((await (await anthropicAdapter(server, { maxRetries: 1 })).complete(request())).text).toBe("second time lucky");
  });

  it("reports an overloaded_error event in the middle of a stream as an http error with the reason", async () => {
    const body = event({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 1 } } }) + `event: error\ndata: ${JSON.stringify(errorBody("overloaded_error", "Overloaded"))}\n\n`;
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body });
    const error = await modelFailure((await anthropicAdapter(server)).complete(request()));
    expect(error.kind).toBe("http");
    expect(error.status).toBeUndefined();
    expect(error.message).toContain("Overloaded");
  });

  it("does not retry a 400, and quotes the field it names", async () => {
    const said = "messages.1.content.0.tool_result.tool_use_id: Field required";
    server.enqueue({ kind: "status", status: 400, body: JSON.stringify(errorBody("invalid_request_error", said)) });
    const error = await modelFailure((await anthropicAdapter(server)).complete(request()));
    expect(error).toMatchObject({ kind: "http", status: 400, serverText: said });
    expect(error.message).toContain(said);
    expect(server.requests).toHaveLength(1);
  });

  it("reports a stream cut in the middle of input_json_delta as unreachable", async () => {
    server.enqueue({ kind: "cut_in_tool", input: JSON.stringify({ code: "print('a long cell')" }), pieces: 2 });
    const error = await modelFailure((await anthropicAdapter(server, { maxRetries: 0 })).complete(request({ tools: [PYTHON_TOOL] })));
    expect(error.kind).toBe("unreachable");
    expect(error.message).toContain("broke off in the middle of the reply");
  });

  it("passes tool input that is not JSON when assembled through as the raw text (the runner answers it)", async () => {
    const broken = '{"code": "print(1)"';
    server.enqueue({ kind: "reply", toolUses: [{ id: "toolu_x", name: "python", input: broken }], pieces: 3 });
    const reply = await (await anthropicAdapter(server)).complete(request({ tools: [PYTHON_TOOL] }));
    expect(reply.toolCalls).toEqual([{ id: "toolu_x", name: "python", arguments: broken }]);
  });

  it("fails a reply that reached max_tokens in the middle of a tool call, naming model.max_tokens", async () => {
    server.enqueue({ kind: "reply", text: "Running:", toolUses: [{ name: "python", input: '{"code": "for i in' }], stopReason: "max_tokens" });
    const error = await modelFailure((await anthropicAdapter(server, {}, { maxTokens: 64 })).complete(request({ tools: [PYTHON_TOOL] })));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain("max_tokens (64, model.max_tokens)");
  });

  it("refuses a stream that ends without a stop reason, and an event of the wrong shape", async () => {
    server.enqueue({ kind: "reply", text: "no ending", stopReason: null });
    expect((await modelFailure((await anthropicAdapter(server)).complete(request()))).message).toContain("finish reason");
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: event({ type: "content_block_delta", index: "zero", delta: { type: "text_delta", text: "x" } }) });
    const wrong = await modelFailure((await anthropicAdapter(server)).complete(request()));
    expect(wrong.kind).toBe("malformed");
    expect(wrong.message).toContain("Messages API event at index");
  });

  it("ends with interrupted when the signal is aborted while the server is silent", async () => {
    server.enqueue({ kind: "hang" });
    const controller = new AbortController();
    const call = (await anthropicAdapter(server)).complete(request({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect((await modelFailure(call)).kind).toBe("interrupted");
  });
});

describe("O-10 B the Anthropic key never leaks", () => {
  it("is kept out of errors and of everything the SDK logs at debug level, even when the server echoes x-api-key", async () => {
    const lines: string[] = [];
    const record = (message: string, ...rest: unknown[]) => void lines.push([message, ...rest.map((item) => inspect(item, { depth: Infinity }))].join(" "));
    const logger: ModelLogger = { error: record, warn: record, info: record, debug: record };
    const echo = { kind: "status", status: 401, body: (sent: { headers: Record<string, unknown> }) => JSON.stringify(errorBody("authentication_error", `invalid x-api-key ${String(sent.headers["x-api-key"])}`)) } as const;
    server.enqueue(echo);
    const error = await modelFailure((await anthropicAdapter(server, { log: { logger, level: "debug" } })).complete(request()));
    expect(error).toMatchObject({ kind: "http", status: 401 });
    expect(error.message).toContain("invalid x-api-key [redacted]");
    expectNoKey(error);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(KEY);
  });
});

/** Tool input far past MAX_TOOL_ARGUMENT_DEPTH: serialising it whole overflows the call stack. */
const DEEP_INPUT = `{"code": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`;

describe("O-10 B tool input nested past MAX_TOOL_ARGUMENT_DEPTH", () => {
  it("a conversation holding such a call is still sent (its input as text), so the next model calls do not fail", async () => {
    server.enqueue({ kind: "reply", toolUses: [{ id: "toolu_deep", name: "python", input: DEEP_INPUT }], pieces: 8 });
    const adapter = await anthropicAdapter(server);
    const first = await adapter.complete(request({ tools: [PYTHON_TOOL] }));
    expect(first.toolCalls).toEqual([{ id: "toolu_deep", name: "python", arguments: DEEP_INPUT }]);

    server.enqueue({ kind: "reply", text: "understood" });
    const next = request({
      tools: [PYTHON_TOOL],
      messages: [
        ...request().messages,
        { role: "assistant", content: "", tool_calls: first.toolCalls },
        { role: "tool", tool_call_id: "toolu_deep", content: `Error: the arguments of python nest deeper than MAX_TOOL_ARGUMENT_DEPTH (${MAX_TOOL_ARGUMENT_DEPTH} levels)` },
      ],
    });
    expect((await adapter.complete(next)).text).toBe("understood");
    const sent = server.requests[1]!.body.messages[1].content[0];
    expect(sent).toEqual({ type: "tool_use", id: "toolu_deep", name: "python", input: { unparsed_arguments: DEEP_INPUT } });
  });

  it("a whole (non-streamed) reply whose tool input nests too deep fails as malformed naming the bound", async () => {
    const message = `{"id":"msg_fake","type":"message","role":"assistant","model":"fake","content":[{"type":"tool_use","id":"toolu_deep","name":"python","input":${DEEP_INPUT}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`;
    server.enqueue({ kind: "raw", contentType: "application/json", body: message });
    const error = await modelFailure((await anthropicAdapter(server)).complete(request({ tools: [PYTHON_TOOL] })));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain(`MAX_TOOL_ARGUMENT_DEPTH (${MAX_TOOL_ARGUMENT_DEPTH} levels)`);
  });
});

describe("O-10 B a retry-after past MODEL_MAX_RETRY_WAIT_MS", () => {
  it("ends the call at once with the wait and the bound named, instead of sleeping through it", async () => {
    server.enqueue({ kind: "status", status: 429, headers: { "retry-after": "86400" }, body: JSON.stringify(errorBody("rate_limit_error", "slow down")) });
    const notices: string[] = [];
    const error = await modelFailure((await anthropicAdapter(server)).complete(request({ onNotice: (text) => notices.push(text) })));
    expect(error).toMatchObject({ kind: "http", status: 429 });
    expect(error.message).toContain("slow down");
    expect(error.message).toContain(`asked to wait 24 h before trying again, longer than MODEL_MAX_RETRY_WAIT_MS (${MODEL_MAX_RETRY_WAIT_MS / 1000} s)`);
    expect(server.requests).toHaveLength(1);
    expect(notices).toEqual([]);
  });
});
