import diagnostics from "node:diagnostics_channel";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_UNIX_SOCKET_PATH_BYTES } from "../../src/platform/index.js";
import { Dealer } from "zeromq";
import {
  APP_ERROR_NUMBERS,
  RPC_ARRIVAL_BYTES,
  RPC_ARRIVAL_MESSAGES,
  RPC_CALL_TIMEOUT_MS,
  RPC_CLIENT_DEADLINE_MARGIN_MS,
  RPC_HARD_MESSAGE_BYTES,
  RPC_MAX_MESSAGE_BYTES,
  RouteTable,
  RPC_TRACE_CHANNEL,
  RpcServer,
  type RpcTraceEvent,
} from "../../src/rpc/index.js";
import { type LogEntry, makeRunDir, recordingLogger } from "./helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(routes: RouteTable): Promise<{ server: RpcServer; entries: LogEntry[] }> {
  const run = makeRunDir();
  cleanups.push(run.remove);
  const { logger, entries } = recordingLogger();
  const server = new RpcServer({ runDir: run.dir, routes, logger });
  cleanups.push(() => server.close());
  await server.start();
  return { server, entries };
}

function dealer(endpoint: string): Dealer {
  const socket = new Dealer({ linger: 0, receiveTimeout: 10_000 });
  socket.connect(endpoint);
  cleanups.push(() => socket.close());
  return socket;
}

async function roundTrip(socket: Dealer, token: string, request: object | Buffer): Promise<any> {
  const body = Buffer.isBuffer(request) ? request : JSON.stringify({ jsonrpc: "2.0", ...request });
  await socket.send([token, body]);
  const [reply] = await socket.receive();
  return JSON.parse(reply!.toString());
}

describe("K-4 RPC server over ZeroMQ", () => {
  it("serves a call on ipc://<runDir>/rpc and removes the socket file on close, idempotently", async () => {
    const { server } = await startServer(RouteTable.of({ "skills.list": async () => ({ skills: [] }) }));
    expect(server.endpoint).toBe(`ipc://${server.socketPath}`);
    expect(path.basename(server.socketPath)).toBe("rpc");
    expect(server.token).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(server.socketPath)).toBe(true);
    const reply = await roundTrip(dealer(server.endpoint), server.token, { id: 1, method: "skills.list" });
    expect(reply).toEqual({ jsonrpc: "2.0", id: 1, result: { skills: [] } });
    await server.close();
    await server.close();
    expect(existsSync(server.socketPath)).toBe(false);
  });

  it("refuses a run dir whose socket path would exceed MAX_UNIX_SOCKET_PATH_BYTES", () => {
    const runDir = path.join("/tmp", "d".repeat(MAX_UNIX_SOCKET_PATH_BYTES));
    expect(() => new RpcServer({ runDir })).toThrow(/MAX_UNIX_SOCKET_PATH_BYTES/);
  });

  it("answers an oversized frame with limit_exceeded and keeps serving", async () => {
    const { server } = await startServer(RouteTable.of({ echo: async (params) => params }));
    const socket = dealer(server.endpoint);
    const big = Buffer.alloc(RPC_MAX_MESSAGE_BYTES + 1, 0x20);
    const refused = await roundTrip(socket, server.token, big);
    expect(refused.error.code).toBe(APP_ERROR_NUMBERS.limit_exceeded);
    expect(refused.error.data).toMatchObject({ limit: "RPC_MAX_MESSAGE_BYTES", size: RPC_MAX_MESSAGE_BYTES + 1 });
    expect((await roundTrip(socket, server.token, { id: 2, method: "echo", params: { a: 1 } })).result).toEqual({ a: 1 });
  });

  it("drops a peer sending more than RPC_HARD_MESSAGE_BYTES without buffering it, and stays up", async () => {
    const { server } = await startServer(RouteTable.of({ echo: async (params) => params }));
    const hostile = dealer(server.endpoint);
    await hostile.send([server.token, Buffer.alloc(RPC_HARD_MESSAGE_BYTES + 1, 0x20)]);
    const other = dealer(server.endpoint);
    expect((await roundTrip(other, server.token, { id: 3, method: "echo", params: {} })).result).toEqual({});
    hostile.receiveTimeout = 300;
    await expect(hostile.receive()).rejects.toThrow();
  });
});

describe("K-4 the receive loop", () => {
  it("answers a burst sent without waiting, each call once, and a close mid-burst ends it without an error", async () => {
    const routes = RouteTable.of({ now: (params) => params, later: async (params) => params });
    const { server, entries } = await startServer(routes);
    const socket = dealer(server.endpoint);
    const count = 300;
    for (let id = 1; id <= count; id++) {
      await socket.send([server.token, JSON.stringify({ jsonrpc: "2.0", id, method: id % 2 ? "now" : "later", params: { id } })]);
    }
    const answered = new Set<number>();
    for (let n = 0; n < count; n++) {
      const [reply] = await socket.receive();
      const { id, result } = JSON.parse(reply!.toString());
      expect(result).toEqual({ id });
      answered.add(id);
    }
    expect(answered.size).toBe(count);
    // Calls still arriving while the server closes: the pending receive fails as the socket closes, quietly.
    for (let id = 1; id <= 50; id++) await socket.send([server.token, JSON.stringify({ jsonrpc: "2.0", id, method: "later", params: {} })]);
    await server.close();
    expect(entries.filter((e) => e.level === "error")).toEqual([]);
  });
});

describe("K-4 arrivals: calls that reached the runtime together", () => {
  /** A route answering which arrival its call came with, numbered in order of first sight. */
  function arrivalRoutes(): RouteTable {
    const numbers = new WeakMap<object, number>();
    let next = 0;
    return RouteTable.of({
      arrival: (_params, context) => {
        if (!numbers.has(context.arrival)) numbers.set(context.arrival, next++);
        return numbers.get(context.arrival);
      },
    });
  }

  it("a call sent after its client had an answer never shares an arrival with an earlier call", async () => {
    const { server } = await startServer(arrivalRoutes());
    const socket = dealer(server.endpoint);
    const seen: number[] = [];
    for (let id = 1; id <= 20; id++) seen.push((await roundTrip(socket, server.token, { id, method: "arrival" })).result);
    expect(new Set(seen).size).toBe(20);
    // A burst sent without waiting, then one more call once every answer is in.
    const burst = 150;
    for (let id = 1; id <= burst; id++) await socket.send([server.token, JSON.stringify({ jsonrpc: "2.0", id, method: "arrival" })]);
    const arrivals: number[] = [];
    for (let n = 0; n < burst; n++) arrivals.push(JSON.parse((await socket.receive())[0]!.toString()).result);
    const after = (await roundTrip(socket, server.token, { id: 999, method: "arrival" })).result;
    expect([...seen, ...arrivals]).not.toContain(after);
    // Waiting messages were taken together, never more than RPC_ARRIVAL_MESSAGES at once.
    const sizes = [...arrivals.reduce((count, a) => count.set(a, (count.get(a) ?? 0) + 1), new Map<number, number>()).values()];
    expect(sizes.length).toBeLessThan(burst);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(RPC_ARRIVAL_MESSAGES);
  });

  it("stops adding to an arrival once it holds RPC_ARRIVAL_BYTES", async () => {
    const { server } = await startServer(arrivalRoutes());
    const socket = dealer(server.endpoint);
    const padding = "x".repeat(Math.floor(RPC_ARRIVAL_BYTES / 3.5));
    const count = 12;
    for (let id = 1; id <= count; id++) {
      await socket.send([server.token, JSON.stringify({ jsonrpc: "2.0", id, method: "arrival", params: { padding } })]);
    }
    const arrivals = new Map<number, number>();
    for (let n = 0; n < count; n++) {
      const arrival = JSON.parse((await socket.receive())[0]!.toString()).result as number;
      arrivals.set(arrival, (arrivals.get(arrival) ?? 0) + 1);
    }
    // Three such calls stay under the bound, so a fourth may join them; a fifth never does.
    expect(Math.max(...arrivals.values())).toBeLessThanOrEqual(4);
  });
});

describe("K-4 the trace of each call", () => {
  it("publishes when a call came off the socket and when its answer went out, to a subscriber only", async () => {
    const { server } = await startServer(RouteTable.of({ echo: async (params) => params }));
    const socket = dealer(server.endpoint);
    const events: RpcTraceEvent[] = [];
    const listen = (event: unknown) => events.push(event as RpcTraceEvent);
    diagnostics.subscribe(RPC_TRACE_CHANNEL, listen);
    try {
      await roundTrip(socket, server.token, { id: 1, method: "echo", params: {} });
      await roundTrip(socket, server.token, { id: 2, method: "echo", params: {} });
    } finally {
      diagnostics.unsubscribe(RPC_TRACE_CHANNEL, listen);
    }
    expect(events.map((event) => event.step)).toEqual(["received", "replied", "received", "replied"]);
    expect(events.every((event, i) => i === 0 || event.at >= events[i - 1]!.at)).toBe(true);
    await roundTrip(socket, server.token, { id: 3, method: "echo", params: {} });
    expect(events).toHaveLength(4);
  });
});

describe("K-4 one bridge contract: what a kernel is told", () => {
  it("gives the kernel the endpoint, token, message limit and a deadline read from the current route table", async () => {
    const { server } = await startServer(RouteTable.of({ quick: async () => 1 }));
    expect(server.kernelAccess()).toEqual({
      endpoint: server.endpoint,
      token: server.token,
      deadlineMs: RPC_CALL_TIMEOUT_MS + RPC_CLIENT_DEADLINE_MARGIN_MS,
      maxMessageBytes: RPC_MAX_MESSAGE_BYTES,
    });
    server.swapRoutes(RouteTable.of({ quick: async () => 1, slow: { handler: async () => 2, timeoutMs: 90_000 } }));
    expect(server.kernelAccess().deadlineMs).toBe(90_000 + RPC_CLIENT_DEADLINE_MARGIN_MS);
  });
});

describe("K-6 isolation", () => {
  it("a client with session A's address and session B's token is refused and logged; A's routes never run", async () => {
    let reachedA = 0;
    const a = await startServer(RouteTable.of({ "skills.list": async () => ++reachedA }));
    const b = await startServer(RouteTable.of({ "skills.list": async () => "B" }));
    expect(a.server.token).not.toBe(b.server.token);
    expect(a.server.endpoint).not.toBe(b.server.endpoint);
    const reply = await roundTrip(dealer(a.server.endpoint), b.server.token, { id: 4, method: "skills.list" });
    expect(reply).toMatchObject({ id: 4, error: { code: APP_ERROR_NUMBERS.forbidden } });
    expect(reachedA).toBe(0);
    expect(a.entries.some((e) => e.level === "warn" && e.message.includes("wrong token"))).toBe(true);
    expect((await roundTrip(dealer(b.server.endpoint), b.server.token, { id: 5, method: "skills.list" })).result).toBe("B");
  });
});
