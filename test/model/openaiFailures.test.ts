import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MODEL_MAX_RETRIES, MODEL_MAX_RETRY_WAIT_MS, createAdapter } from "../../src/model/index.js";
import { closedPort, startFakeOpenAI, type FakeOpenAI } from "./fakeOpenAI.js";
import { ENV, modelFailure, openaiAdapter, openaiSettings, request } from "./support.js";
import { poll } from "../support/poll.js";

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startFakeOpenAI();
});
afterEach(async () => {
  await server.close();
});

/** No wait between retries: the tests check what is retried, not the SDK's back-off. */
const NOW = { "retry-after": "0" };

describe("O-7 openai adapter: retries and HTTP errors", () => {
  it("retries a 429 (the SDK's own retry, obeying retry-after) and then succeeds", async () => {
    server.enqueue({ kind: "status", status: 429, headers: NOW }, { kind: "reply", text: "second time lucky" });
    const reply = await (await openaiAdapter(server)).complete(request());
    expect(reply.text).toBe("second time lucky");
    expect(server.requests).toHaveLength(2);
  });

  it("tells the caller of a wait the server asks for before retrying (onNotice), then retries", async () => {
    server.enqueue({ kind: "status", status: 429, headers: { "retry-after": "1" } }, { kind: "reply", text: "after the wait" });
    const notices: string[] = [];
    const reply = await (await openaiAdapter(server)).complete(request({ onNotice: (text) => notices.push(text) }));
    expect(reply.text).toBe("after the wait");
    expect(notices).toEqual([`the model server at ${server.baseUrl} answered HTTP 429 and asked to wait 1 s before trying again; waiting (attempt 2 of ${MODEL_MAX_RETRIES + 1})`]);
  });

  it("ends the call at once when the server asks to wait longer than MODEL_MAX_RETRY_WAIT_MS (a day), naming both", async () => {
    server.enqueue({ kind: "status", status: 429, headers: { "retry-after": "86400" }, body: JSON.stringify({ error: { message: "quota exhausted" } }) });
    const notices: string[] = [];
    const error = await modelFailure((await openaiAdapter(server)).complete(request({ onNotice: (text) => notices.push(text) })));
    expect(error).toMatchObject({ kind: "http", status: 429 });
    expect(error.message).toContain("quota exhausted");
    expect(error.message).toContain(`asked to wait 24 h before trying again, longer than MODEL_MAX_RETRY_WAIT_MS (${MODEL_MAX_RETRY_WAIT_MS / 1000} s), so albedo did not wait`);
    expect(server.requests).toHaveLength(1);
    expect(notices).toEqual([]);
  });

  it("reads retry-after-ms and an HTTP date as the SDK does: a date a day ahead is refused too", async () => {
    server.enqueue({ kind: "status", status: 503, headers: { "retry-after": new Date(Date.now() + 86_400_000).toUTCString() } });
    expect((await modelFailure((await openaiAdapter(server)).complete(request()))).message).toContain("MODEL_MAX_RETRY_WAIT_MS");
    server.enqueue({ kind: "status", status: 503, headers: { "retry-after-ms": String(MODEL_MAX_RETRY_WAIT_MS + 1) } });
    expect((await modelFailure((await openaiAdapter(server)).complete(request()))).message).toContain("MODEL_MAX_RETRY_WAIT_MS");
    expect(server.requests).toHaveLength(2);
  });

  it("gives up on a persistent 500 after MODEL_MAX_RETRIES retries with an http error quoting the server", async () => {
    for (let attempt = 0; attempt <= MODEL_MAX_RETRIES; attempt += 1) {
      server.enqueue({ kind: "status", status: 500, headers: NOW, body: JSON.stringify({ error: { message: "the GPU caught fire" } }) });
    }
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("http");
    expect(error.status).toBe(500);
    expect(error.message).toContain("the GPU caught fire");
    expect(error.message).toContain(`after ${MODEL_MAX_RETRIES + 1} attempts`);
    expect(server.requests).toHaveLength(MODEL_MAX_RETRIES + 1);
  });

  it("does not retry a 400, and quotes a vLLM-style error body", async () => {
    server.enqueue({ kind: "status", status: 400, body: JSON.stringify({ object: "error", message: "model 'x' does not exist", type: "NotFoundError" }) });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error).toMatchObject({ kind: "http", status: 400 });
    expect(error.message).toContain("model 'x' does not exist");
    expect(server.requests).toHaveLength(1);
  });

  it("does not follow a redirect, so the key cannot be carried to another host", async () => {
    const elsewhere = await startFakeOpenAI();
    try {
      server.enqueue({ kind: "status", status: 307, headers: { location: `${elsewhere.baseUrl}/chat/completions` }, body: "" });
      const error = await modelFailure((await openaiAdapter(server)).complete(request()));
      expect(error).toMatchObject({ kind: "http", status: 307 });
      expect(error.message).toContain("redirect");
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it("reports an error event in the middle of a stream as an http error", async () => {
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: `data: ${JSON.stringify({ error: { message: "upstream provider failed" } })}\n\n` });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("http");
    expect(error.status).toBeUndefined();
    expect(error.message).toContain("upstream provider failed");
  });
});

describe("O-7 openai adapter: deadlines", () => {
  it("times out a server that never answers (MODEL_REQUEST_TIMEOUT_MS, injected short)", async () => {
    server.enqueue({ kind: "hang" });
    const error = await modelFailure((await openaiAdapter(server, { requestTimeoutMs: 200, maxRetries: 0 })).complete(request()));
    expect(error.kind).toBe("timeout");
    expect(error.message).toContain("MODEL_REQUEST_TIMEOUT_MS");
    expect(server.requests).toHaveLength(1);
  });

  it("times out a reply that goes silent in the middle (MODEL_STREAM_IDLE_TIMEOUT_MS)", async () => {
    server.enqueue({ kind: "partial", text: "I was saying that", deltas: 2, then: "hang" });
    const seen: string[] = [];
    const adapter = await openaiAdapter(server, { streamIdleTimeoutMs: 200, maxRetries: 0 });
    const error = await modelFailure(adapter.complete(request({ onText: (delta) => seen.push(delta) })));
    expect(error.kind).toBe("timeout");
    expect(error.message).toContain("MODEL_STREAM_IDLE_TIMEOUT_MS");
    expect(seen).toEqual(["I", " was"]);
    expect(await server.requests[0]?.closed).toBe("aborted");
  });

  it("bounds the whole call, a retry-after's wait included (MODEL_REPLY_TIMEOUT_MS)", async () => {
    server.enqueue({ kind: "status", status: 429, headers: { "retry-after": String(MODEL_MAX_RETRY_WAIT_MS / 1000) } });
    const error = await modelFailure((await openaiAdapter(server, { replyTimeoutMs: 300 })).complete(request()));
    expect(error.kind).toBe("timeout");
    expect(error.message).toContain("MODEL_REPLY_TIMEOUT_MS");
  });
});

describe("O-7 openai adapter: broken connections and replies", () => {
  it("reports a stream cut mid-reply as unreachable, after the prose that did arrive", async () => {
    server.enqueue({ kind: "partial", text: "This reply will not finish", deltas: 3, then: "destroy" });
    const seen: string[] = [];
    const error = await modelFailure((await openaiAdapter(server)).complete(request({ onText: (delta) => seen.push(delta) })));
    expect(error.kind).toBe("unreachable");
    expect(error.message).toContain("broke off in the middle of the reply");
    expect(seen.join("")).toBe("This reply will");
  });

  it("reports a closed port as unreachable", async () => {
    const port = await closedPort();
    const adapter = await createAdapter(openaiSettings(`http://127.0.0.1:${port}/v1`), ENV, { maxRetries: 0 });
    const error = await modelFailure(adapter.complete(request()));
    expect(error.kind).toBe("unreachable");
    expect(error.message).toContain("connection refused");
    expect(error.message).toContain(`127.0.0.1:${port}`);
  });

  it("refuses a stream that ends without a finish reason", async () => {
    server.enqueue({ kind: "reply", text: "no ending", finishReason: null });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain("finish reason");
  });

  it("refuses a chunk that is not JSON, or not a chunk", async () => {
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: "data: {not json\n\n" });
    const notJson = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(notJson.kind).toBe("malformed");
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: `data: ${JSON.stringify({ choices: [{ delta: { content: 42 } }] })}\n\n` });
    const wrongShape = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(wrongShape.kind).toBe("malformed");
    expect(wrongShape.message).toContain("choices.0.delta.content");
  });

  it("refuses a tool call without a function name, and an absurd call index", async () => {
    const nameless = { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c", function: { arguments: "{}" } }] }, finish_reason: "tool_calls" }] };
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: `data: ${JSON.stringify(nameless)}\n\n` });
    expect((await modelFailure((await openaiAdapter(server)).complete(request()))).message).toContain("names no function");
    const far = { choices: [{ index: 0, delta: { tool_calls: [{ index: 1_000_000_000, id: "c", function: { name: "python", arguments: "{}" } }] } }] };
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: `data: ${JSON.stringify(far)}\n\n` });
    expect((await modelFailure((await openaiAdapter(server)).complete(request()))).message).toContain("MAX_MODEL_TOOL_CALLS");
  });

  it("refuses an answer that is neither an event stream nor JSON", async () => {
    server.enqueue({ kind: "raw", contentType: "text/html", body: "<html>sign in to the proxy</html>" });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain("text/html");
  });
});

describe("O-7 openai adapter: interrupts", () => {
  it("ends at once with interrupted when the signal is aborted mid-reply, and closes the HTTP request", async () => {
    server.enqueue({ kind: "partial", text: "Counting slowly now", deltas: 1, then: "hang" });
    const controller = new AbortController();
    const adapter = await openaiAdapter(server);
    const error = await modelFailure(adapter.complete(request({ signal: controller.signal, onText: () => controller.abort() })));
    expect(error.kind).toBe("interrupted");
    expect(await server.requests[0]?.closed).toBe("aborted");
  });

  it("ends with interrupted while the SDK waits out a retry-after", async () => {
    server.enqueue({ kind: "status", status: 503, headers: { "retry-after": String(MODEL_MAX_RETRY_WAIT_MS / 1000) } });
    const controller = new AbortController();
    const call = (await openaiAdapter(server)).complete(request({ signal: controller.signal }));
    await poll(() => server.requests.length === 1);
    controller.abort();
    expect((await modelFailure(call)).kind).toBe("interrupted");
  });

  it("sends nothing when the signal was aborted before the call", async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await modelFailure((await openaiAdapter(server)).complete(request({ signal: controller.signal })));
    expect(error.kind).toBe("interrupted");
    expect(server.requests).toHaveLength(0);
  });

  it("returns what onText threw, unchanged, and closes the request", async () => {
    server.enqueue({ kind: "partial", text: "one two three", deltas: 2, then: "hang" });
    const mine = new Error("the UI went away");
    const outcome = (await openaiAdapter(server)).complete(request({ onText: () => { throw mine; } }));
    await expect(outcome).rejects.toBe(mine);
    expect(await server.requests[0]?.closed).toBe("aborted");
  });
});
