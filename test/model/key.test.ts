import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAdapter, type ModelError, type ModelLogger } from "../../src/model/index.js";
import { closedPort, startFakeOpenAI, type FakeOpenAI, type FakeReply } from "./fakeOpenAI.js";
import { ENV, KEY, expectNoKey, modelFailure, openaiAdapter, openaiSettings, request } from "./support.js";

let server: FakeOpenAI;
beforeEach(async () => {
  server = await startFakeOpenAI();
});
afterEach(async () => {
  await server.close();
  vi.restoreAllMocks();
});

/** A logger that keeps every line the SDK writes, arguments rendered as inspect would show them. */
function recordingLogger(): { logger: ModelLogger; lines: string[] } {
  const lines: string[] = [];
  const record = (message: string, ...rest: unknown[]) => void lines.push([message, ...rest.map((item) => inspect(item, { depth: Infinity }))].join(" "));
  return { logger: { error: record, warn: record, info: record, debug: record }, lines };
}

/** A server that quotes the Authorization header back, as some do in their error text. */
const echoKey = (status: number): FakeReply => ({
  kind: "status",
  status,
  headers: { "retry-after": "0" },
  body: (sent) => JSON.stringify({ error: { message: `Incorrect API key provided: ${sent.authorization ?? ""}` } }),
});

describe("O-7 B the API key never leaks", () => {
  it("is kept out of http errors, even when the server echoes it back", async () => {
    server.enqueue(echoKey(401));
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("http");
    expect(error.message).toContain("Incorrect API key provided: Bearer [redacted]");
    expectNoKey(error);
  });

  it("is kept out of an error event that echoes it in the middle of a stream", async () => {
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: `data: ${JSON.stringify({ error: { message: `bad key ${KEY}` } })}\n\n` });
    const error = await modelFailure((await openaiAdapter(server)).complete(request()));
    expect(error.kind).toBe("http");
    expectNoKey(error);
  });

  it("is kept out of every other failure, and out of everything the SDK logs at debug level", async () => {
    const { logger, lines } = recordingLogger();
    const adapter = await openaiAdapter(server, { requestTimeoutMs: 200, maxRetries: 1, log: { logger, level: "debug" } });
    const failures: ModelError[] = [];
    server.enqueue(echoKey(500), echoKey(500));
    failures.push(await modelFailure(adapter.complete(request())));
    server.enqueue({ kind: "hang" }, { kind: "hang" });
    failures.push(await modelFailure(adapter.complete(request())));
    server.enqueue({ kind: "partial", text: `leaking ${KEY} nowhere`, deltas: 1, then: "destroy" });
    failures.push(await modelFailure(adapter.complete(request())));
    server.enqueue({ kind: "raw", contentType: "text/event-stream", body: `data: {"oops": "${KEY}"\n\n` });
    failures.push(await modelFailure(adapter.complete(request())));
    const port = await closedPort();
    const unreachable = await createAdapter(openaiSettings(`http://127.0.0.1:${port}/v1`), ENV, { maxRetries: 0, log: { logger, level: "debug" } });
    failures.push(await modelFailure(unreachable.complete(request())));
    expect(failures.map((error) => error.kind)).toEqual(["http", "timeout", "unreachable", "malformed", "unreachable"]);
    for (const error of failures) expectNoKey(error);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(KEY);
  });

  it("is not in describe(), nor in the adapter object as inspected", async () => {
    const adapter = await openaiAdapter(server);
    expect(JSON.stringify(adapter.describe())).not.toContain(KEY);
    expect(JSON.stringify(adapter.describe())).not.toContain("ALBEDO_TEST_MODEL_KEY");
    expect(inspect(adapter, { depth: Infinity, showHidden: true })).not.toContain(KEY);
  });

  it("writes nothing to the console, even with OPENAI_LOG=debug in the environment", async () => {
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((method) => vi.spyOn(console, method).mockImplementation(() => undefined));
    const saved = process.env.OPENAI_LOG;
    process.env.OPENAI_LOG = "debug";
    try {
      server.enqueue(echoKey(401));
      await modelFailure((await openaiAdapter(server)).complete(request()));
    } finally {
      if (saved === undefined) delete process.env.OPENAI_LOG;
      else process.env.OPENAI_LOG = saved;
    }
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it("is sent to base_url only, as a bearer token", async () => {
    server.enqueue({ kind: "reply", text: "ok" });
    await (await openaiAdapter(server)).complete(request());
    expect(server.requests.map((sent) => sent.authorization)).toEqual([`Bearer ${KEY}`]);
  });
});
