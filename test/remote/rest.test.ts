import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { KernelAPI, ServerConnection } from "@jupyterlab/services";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { remoteErrorOf } from "../../src/kernel/remote/errors.js";
import { MAX_REMOTE_QUOTE_CHARS } from "../../src/kernel/remote/limits.js";
import { quoteRemote, REDACTED } from "../../src/kernel/remote/quote.js";
import { boundedFetch } from "../../src/kernel/remote/rest.js";
import { serverSettings } from "../../src/kernel/remote/server.js";
import { poll } from "../support/poll.js";

/** Small bounds, so each edge is reached with a few bytes and a short wait. */
const BOUNDS = { maxBytes: 1024, timeoutMs: 300 };
const TOKEN = "jt-0123456789abcdef";
/** An endless answer comes in chunks this size, against a bound of many chunks (as the real one is). */
const ENDLESS_CHUNK_BYTES = 64 * 1024;
const ENDLESS_BOUNDS = { maxBytes: 4 * 1024 * 1024, timeoutMs: 30_000 };
/** How many endless answers in a row must each be closed. */
const ENDLESS_ROUNDS = 100;

type Route = (req: IncomingMessage, res: ServerResponse) => void;

const ROUTES: Readonly<Record<string, Route>> = {
  "/exact": (_req, res) => res.end("x".repeat(BOUNDS.maxBytes)),
  // One byte over, then the answer stays open: only the client's abort ends it.
  "/over": (_req, res) => res.write("x".repeat(BOUNDS.maxBytes + 1)),
  "/declared": (_req, res) => res.writeHead(200, { "content-length": String(10 * BOUNDS.maxBytes) }).flushHeaders(),
  "/silent": () => undefined,
  "/stall": (_req, res) => res.write("{"),
  "/api/kernels": (_req, res) => {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: `refused ${TOKEN}`, traceback: `Traceback: ${TOKEN}` }));
  },
};

describe("K-12 B every REST answer of a remote server is read within a byte bound and a deadline (boundedFetch)", () => {
  let server: Server;
  let base: string;
  const closed = new Set<string>();
  const read = boundedFetch([TOKEN], BOUNDS);

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      res.on("close", () => closed.add(path));
      (ROUTES[path] ?? ((_q: IncomingMessage, r: ServerResponse) => r.writeHead(404).end()))(req, res);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("an answer of exactly maxBytes is read whole; one byte more fails naming MAX_REMOTE_BODY_BYTES, and the answer is aborted", async () => {
    expect(await (await read(`${base}/exact`)).text()).toHaveLength(BOUNDS.maxBytes);
    const over = await read(`${base}/over`);
    await expect(over.text()).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/over: the answer is larger than MAX_REMOTE_BODY_BYTES \(1\.0 KB\); albedo stopped reading it$/);
    await poll(() => closed.has("/over"), { what: "the server to see its answer aborted" });
  });

  it("an answer whose Content-Length passes the bound is aborted before its body is read", async () => {
    await expect((await read(`${base}/declared`)).text()).rejects.toThrow(/larger than MAX_REMOTE_BODY_BYTES/);
    await poll(() => closed.has("/declared"), { what: "the server to see its answer aborted" });
  });

  it("an endless answer the server keeps pushing is closed each time it passes the bound, so the server is never left blocked writing", async () => {
    const ended: number[] = [];
    const endless = createServer((_req, res) => {
      let gone = false;
      const chunk = Buffer.alloc(ENDLESS_CHUNK_BYTES, 0x61);
      const pump = () => {
        while (!gone) if (!res.write(chunk)) return void res.once("drain", pump);
      };
      res.once("close", () => ((gone = true), ended.push(ended.length)));
      pump();
    });
    await new Promise<void>((done) => endless.listen(0, "127.0.0.1", done));
    const address = endless.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/endless`;
    const bounded = boundedFetch([TOKEN], ENDLESS_BOUNDS);
    try {
      // Before the body was cancelled too, one of the first few such answers stayed open, paused.
      for (let round = 1; round <= ENDLESS_ROUNDS; round += 1) {
        await expect((await bounded(url, { method: "POST", body: "{}" })).arrayBuffer()).rejects.toThrow(/larger than MAX_REMOTE_BODY_BYTES/);
        await poll(() => ended.length === round, { what: `the server to see answer ${round} of ${ENDLESS_ROUNDS} closed` });
      }
    } finally {
      endless.closeAllConnections();
      await new Promise<void>((done) => endless.close(() => done()));
    }
  });

  it("no answer by the deadline rejects naming REMOTE_REQUEST_TIMEOUT_MS, and so does a body that stops coming", async () => {
    await expect(read(`${base}/silent`)).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/silent: no complete answer within REMOTE_REQUEST_TIMEOUT_MS \(300 ms\)$/);
    const stalled = await read(`${base}/stall`);
    expect(stalled.status).toBe(200);
    await expect(stalled.json()).rejects.toThrow(/\/stall: no complete answer within REMOTE_REQUEST_TIMEOUT_MS \(300 ms\)$/);
    await poll(() => closed.has("/silent") && closed.has("/stall"), { what: "the server to see both requests aborted" });
  });

  it("through services, an error answer's message is quoted with the token redacted, and its traceback is never printed", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const remote = { url: `${base}/`, token: TOKEN, tokenEnv: "JUPYTER_TOKEN" };
    const thrown = await KernelAPI.startNew({ name: "python3" }, serverSettings(remote)).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ServerConnection.ResponseError);
    expect((thrown as Error).message).toBe(`refused ${REDACTED}`);
    expect(printed).not.toHaveBeenCalled();
    expect((await remoteErrorOf(thrown, "kernel start", remote)).message).toBe(`kernel start: ${base}/ answered HTTP 500: refused ${REDACTED}`);
  });
});

describe("K-12 B a remote server's text as albedo quotes it (quoteRemote)", () => {
  it("redacts the token before the cut, so no part of it survives a cut through it", () => {
    const text = `${"x".repeat(MAX_REMOTE_QUOTE_CHARS - 5)}${TOKEN} and more`;
    const quoted = quoteRemote(text, [TOKEN]);
    expect(quoted).toBe(`${"x".repeat(MAX_REMOTE_QUOTE_CHARS - 5)}${REDACTED.slice(0, 5)}...`);
    expect(quoted).not.toContain(TOKEN.slice(0, 5));
  });

  it("redacts the token as a URL carries it, and turns control characters into spaces", () => {
    const token = "a/b c";
    expect(quoteRemote(`see ?token=${encodeURIComponent(token)}\n\u001b[31mred`, [token])).toBe(`see ?token=${REDACTED} [31mred`);
  });

  it("leaves text of at most MAX_REMOTE_QUOTE_CHARS alone", () => {
    const text = "y".repeat(MAX_REMOTE_QUOTE_CHARS);
    expect(quoteRemote(text, [TOKEN])).toBe(text);
  });
});
