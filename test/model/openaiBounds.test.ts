import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_MODEL_REPLY_BYTES } from "../../src/model/index.js";
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

  it("reads only the start of a huge error body", async () => {
    server.enqueue({ kind: "status", status: 400, body: JSON.stringify({ error: { message: "y".repeat(4 * 1024 * 1024) } }) });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("http");
    expect(error.message.length).toBeLessThan(1_000);
  });
});
