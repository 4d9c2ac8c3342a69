import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_MODEL_REPLY_BYTES, MAX_MODEL_SSE_EVENT_BYTES } from "../../src/model/index.js";
import { startFakeOpenAI, type FakeOpenAI } from "./fakeOpenAI.js";
import { modelFailure, openaiAdapter, request } from "./support.js";

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startFakeOpenAI();
});
afterEach(async () => {
  await server.close();
});

/** A bound on the wire far below the default, so a test need not read 64 MiB. */
const SMALL_RESPONSE_BYTES = 256 * 1024;
/** More than socket buffers hold, so the server is still writing when the client stops reading. */
const ENDLESS_BYTES = 64 * 1024 * 1024;

/** A liveness check, not a speed one: the longest the event loop may stall while a reply is read. */
const LIVENESS_GAP_MS = 2_000;
const TICK_MS = 10;

/** The longest pause between the ticks of a short interval timer, while it runs. */
class TimerGaps {
  longestGapMs = 0;
  #last = performance.now();
  readonly #timer = setInterval(() => {
    const now = performance.now();
    this.longestGapMs = Math.max(this.longestGapMs, now - this.#last);
    this.#last = now;
  }, TICK_MS);

  stop(): void {
    clearInterval(this.#timer);
    const now = performance.now();
    this.longestGapMs = Math.max(this.longestGapMs, now - this.#last);
  }
}

describe("O-7 B openai adapter: bounded replies", () => {
  it("accepts prose of exactly MAX_MODEL_REPLY_BYTES", async () => {
    server.enqueue({ kind: "reply", text: "x".repeat(MAX_MODEL_REPLY_BYTES), pieces: 64 });
    const reply = await (await openaiAdapter(server)).complete(request());
    expect(reply.text).toHaveLength(MAX_MODEL_REPLY_BYTES);
  });

  it("cuts off prose one byte over MAX_MODEL_REPLY_BYTES as malformed, and closes the request", async () => {
    server.enqueue({ kind: "reply", text: "x".repeat(MAX_MODEL_REPLY_BYTES + 1), pieces: 64 });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("malformed");
    expect(error.message).toContain("MAX_MODEL_REPLY_BYTES");
  });

  it("counts tool-call arguments (in UTF-8 bytes) against the same bound", async () => {
    const half = "é".repeat(MAX_MODEL_REPLY_BYTES / 4); // 2 bytes each: half the bound per call
    server.enqueue({ kind: "reply", text: "!", toolCalls: [{ name: "python", arguments: half }, { name: "python", arguments: half }], pieces: 16 });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("malformed");
  });

  it("stops reading an endless stream of deltas without holding it", async () => {
    server.enqueue({ kind: "huge", bytes: ENDLESS_BYTES, as: "deltas" });
    const seen: string[] = [];
    const error = await modelFailure((await openaiAdapter(server)).complete(request({ onText: (delta) => seen.push(delta) })));
    expect(error.kind).toBe("malformed");
    expect(seen.join("").length).toBeLessThanOrEqual(MAX_MODEL_REPLY_BYTES);
    expect(await server.requests[0]?.closed).toBe("aborted");
  });

  // One endless SSE line, or one endless JSON body: either would sit whole in the SDK's buffer.
  for (const as of ["one_line", "json"] as const) {
    it(`cuts off a ${as === "json" ? "huge plain JSON reply" : "single endless SSE line"} at MAX_MODEL_RESPONSE_BYTES (injected small), and closes the request`, async () => {
      server.enqueue({ kind: "huge", bytes: ENDLESS_BYTES, as });
      const error = await modelFailure((await openaiAdapter(server, { maxResponseBytes: SMALL_RESPONSE_BYTES })).complete(request()));
      expect(error.kind).toBe("malformed");
      expect(error.message).toContain("MAX_MODEL_RESPONSE_BYTES");
      expect(await server.requests[0]?.closed).toBe("aborted");
    });
  }

  it("fails one SSE line past MAX_MODEL_SSE_EVENT_BYTES with an error naming it, reading it in linear time (timers keep firing)", async () => {
    server.enqueue({ kind: "huge", bytes: 2 * MAX_MODEL_SSE_EVENT_BYTES, as: "one_line" });
    const liveness = new TimerGaps();
    try {
      const error = await modelFailure((await openaiAdapter(server)).complete(request()));
      expect(error.kind).toBe("malformed");
      expect(error.message).toContain(`over ${MAX_MODEL_SSE_EVENT_BYTES} bytes (MAX_MODEL_SSE_EVENT_BYTES)`);
    } finally {
      liveness.stop();
    }
    expect(liveness.longestGapMs).toBeLessThan(LIVENESS_GAP_MS);
    expect(await server.requests[0]?.closed).toBe("aborted");
  });

  it("takes an event just under MAX_MODEL_SSE_EVENT_BYTES whole", async () => {
    // A whole reply in one event, far past any real chunk yet under the bound.
    const text = "x".repeat(MAX_MODEL_REPLY_BYTES);
    const body = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body });
    expect((await (await openaiAdapter(server)).complete(request())).text).toHaveLength(MAX_MODEL_REPLY_BYTES);
  });

  it("reads only the start of a huge error body", async () => {
    server.enqueue({ kind: "status", status: 400, body: JSON.stringify({ error: { message: "y".repeat(4 * 1024 * 1024) } }) });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("http");
    expect(error.message.length).toBeLessThan(1_000);
  });
});
