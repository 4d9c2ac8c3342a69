import { readdirSync, readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_CONNECTIONS, MAX_CONNECTIONS_PER_PEER } from "../../src/daemon/index.js";
import { call, killDaemon, makeDirs, openStream, startDaemon, type DaemonProcess, type Dirs } from "./support/daemon.js";
import { poll } from "../support/poll.js";

let dirs: Dirs;
let daemon: DaemonProcess;
/** Descriptors the daemon holds with no session and no connection. */
let idle: number;
/** Descriptors the daemon holds before a test opens its connections. */
let baseline: number;
const sockets: Client[] = [];

/** Descriptors the daemon may hold beyond its idle count besides the capped connections: the test's own keep-alive connections and some slack. */
const FD_SLACK = 16;
/** Connections opened at once while flooding; the daemon sees them arrive faster than it can close any. */
const CONNECT_BATCH = 100;
/** Descriptors this test process keeps for itself (vitest, the daemon's pipes, the fetch pool). */
const OWN_FD_RESERVE = 256;

interface Client {
  readonly socket: Socket;
  received: string;
  /** The daemon ended the connection (its FIN, or a reset). */
  ended: boolean;
}

beforeAll(async () => {
  dirs = await makeDirs();
  daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
}, 60_000);

afterEach(() => {
  for (const client of sockets.splice(0)) client.socket.destroy();
});

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
});

function daemonFds(): number {
  return readdirSync(`/proc/${daemon.process.pid}/fd`).length;
}

/** This process's soft limit on open files, from /proc. */
function ownFdLimit(): number {
  const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((row) => row.startsWith("Max open files"))!;
  return Number(line.split(/\s+/)[3]);
}

/**
 * Opens a raw TCP connection to the daemon and records what comes back and whether the daemon
 * ended it. Like the probe that found the leak, it never closes its own side (allowHalfOpen), so
 * only a daemon that destroys its socket, rather than just ending it, frees the descriptor.
 */
async function rawConnection(localAddress?: string): Promise<Client> {
  const url = new URL(daemon.url);
  const socket = connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true, ...(localAddress ? { localAddress } : {}) });
  const client: Client = { socket, received: "", ended: false };
  sockets.push(client);
  socket.setEncoding("utf8").on("data", (chunk: string) => (client.received += chunk));
  socket.on("error", () => (client.ended = true));
  socket.on("end", () => (client.ended = true));
  socket.on("close", () => (client.ended = true));
  await new Promise<void>((resolve) => {
    socket.once("connect", () => resolve());
    socket.once("close", () => resolve());
  });
  return client;
}

/** Opens `count` idle connections in batches (from `localAddress`, another loopback address being another peer), running `between` after each batch. */
async function flood(count: number, between: () => Promise<void> = async () => undefined, localAddress?: string): Promise<Client[]> {
  const clients: Client[] = [];
  for (let opened = 0; opened < count; opened += CONNECT_BATCH) {
    clients.push(...(await Promise.all(Array.from({ length: Math.min(CONNECT_BATCH, count - opened) }, () => rawConnection(localAddress)))));
    await between();
  }
  return clients;
}

describe("D-1 B connections without the token cannot exhaust the daemon's descriptors", () => {
  beforeAll(() => {
    idle = daemonFds();
  });

  // Connections of the test before (this process's keep-alive pool too) must be gone, or they take places under the caps.
  // The test that opens a session runs last: a closed kernel leaves the daemon some descriptors (zeromq's).
  beforeEach(async () => {
    await poll(() => daemonFds() <= idle, { what: "the daemon to hold no connection" });
  });

  it(`MAX_CONNECTIONS_PER_PEER (${MAX_CONNECTIONS_PER_PEER}) connections from one peer all stay; one more closes the oldest`, { timeout: 60_000 }, async () => {
    const clients = await flood(MAX_CONNECTIONS_PER_PEER);
    const last = await rawConnection();
    await poll(() => clients[0]!.ended, { what: "the oldest connection to be closed" });
    expect(clients.filter((client) => client.ended)).toEqual([clients[0]]);
    expect(last.ended).toBe(false);
    expect(clients[0]!.received).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
  });

  it(`past MAX_CONNECTIONS (${MAX_CONNECTIONS}) from several peers the oldest connections without the token go first, whoever opened them`, { timeout: 60_000 }, async () => {
    const first = await flood(MAX_CONNECTIONS_PER_PEER);
    const second = await flood(MAX_CONNECTIONS - MAX_CONNECTIONS_PER_PEER + CONNECT_BATCH, undefined, "127.0.0.2");
    await poll(() => first.filter((client) => client.ended).length >= CONNECT_BATCH, { what: "room to be made" });
    expect(first.slice(0, CONNECT_BATCH).every((client) => client.ended)).toBe(true);
    expect(second.some((client) => client.ended)).toBe(false);
  });

  it("a connection that sent half a request is closed at the timeout, and its descriptor released, though the client never closes its side", { timeout: 60_000 }, async () => {
    baseline = daemonFds();
    const clients = await flood(CONNECT_BATCH);
    for (const client of clients) client.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n");
    await poll(() => clients.every((client) => client.ended), { what: "the daemon to close every half-sent request" });
    await poll(() => daemonFds() <= baseline + FD_SLACK, { what: "the daemon's descriptors to fall back" });
  });

  it("of thousands of idle connections at most MAX_CONNECTIONS_PER_PEER stay, the oldest get 503 too_many_connections; authenticated requests and a stream get through; all are released at the timeout", { timeout: 120_000 }, async () => {
    const sessionId = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const stream = await openStream(daemon, sessionId);
    baseline = daemonFds();
    const count = Math.min(3 * MAX_CONNECTIONS_PER_PEER, ownFdLimit() - OWN_FD_RESERVE);
    expect(count).toBeGreaterThan(MAX_CONNECTIONS_PER_PEER);
    const answers: number[] = [];
    const clients = await flood(count, async () => void answers.push((await call(daemon, "GET", "/health")).status));
    expect(answers.every((status) => status === 200)).toBe(true);
    const open = () => clients.filter((client) => !client.ended).length;
    await poll(() => open() <= MAX_CONNECTIONS_PER_PEER, { what: `at most ${MAX_CONNECTIONS_PER_PEER} connections left open` });
    expect(daemonFds()).toBeLessThanOrEqual(baseline + MAX_CONNECTIONS_PER_PEER + FD_SLACK);
    const refused = clients.find((client) => client.ended && client.received !== "");
    expect(refused?.received).toMatch(/^HTTP\/1\.1 503 [^\r]*\r\n[\s\S]*"code":"too_many_connections"/);

    expect((await call({ url: daemon.url, token: "wrong" }, "GET", "/health")).status).toBe(401);
    expect(stream.ws.readyState).toBe(stream.ws.OPEN);
    expect((await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code: "print('still here')", execution_id: "after-flood" })).status).toBe(200);
    await poll(() => stream.events.some((event) => event.execution_id === "after-flood"), { what: "the stream to carry the cell's output" });

    await poll(() => open() === 0, { what: "the daemon to close every idle connection" });
    await poll(() => daemonFds() <= baseline + FD_SLACK, { what: "the daemon's descriptors to fall back" });
    expect(stream.ws.readyState).toBe(stream.ws.OPEN);
    await stream.close();
    expect((await call(daemon, "DELETE", `/sessions/${sessionId}`)).status).toBe(204);
  });
});
