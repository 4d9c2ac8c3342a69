import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelLogger } from "../../src/model/index.js";
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
