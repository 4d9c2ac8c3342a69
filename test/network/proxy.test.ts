/**
 * The egress proxy with real sockets: the proxy on a Unix socket, test servers on 127.0.0.2 and
 * up, clients speaking HTTP as pip and curl do. Names are mapped by a resolver given to the proxy
 * (the host's own resolver is used for `localhost`).
 */
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { connect as netConnect, createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy, EgressProxyError, startEgressProxy, type ConnectionRecord, type EgressProxy, type EgressProxyOptions, type NetworkPolicy, type NetworkSetting } from "../../src/network/index.js";
import { systemResolver } from "../../src/network/resolve.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";
import { connectThrough, echoHandler, httpsViaProxy, makeTestCa, mapResolver, rawExchange, startServer, viaProxy, type TestCa, type TestServer } from "./support.js";

const dirs = tempDirs("alb-net-");
const proxies: EgressProxy[] = [];
const servers: TestServer[] = [];
const sockets: Socket[] = [];
let ca: TestCa;
let plain: TestServer;
let secure: TestServer;

beforeAll(async () => {
  ca = makeTestCa(dirs.make());
  plain = await startServer("127.0.0.2", echoHandler);
  secure = await startServer("127.0.0.3", echoHandler, ca.serverCert(["files.test", "api.test"]));
  servers.push(plain, secure);
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  dirs.cleanup();
});

const NAMES = { "files.test": "127.0.0.2", "api.test": "127.0.0.3", "sneaky.test": "10.0.0.1", "meta.test": "169.254.169.254", "mixed.test": ["93.184.216.34", "10.0.0.1"], "mapped.test": "::ffff:127.0.0.2" };

/** A proxy on a fresh socket whose policy is `setting` (swappable through the returned setter), collecting its records. */
async function proxyWith(setting: NetworkSetting, options: Partial<EgressProxyOptions> = {}) {
  let policy: NetworkPolicy = compilePolicy(setting);
  const records: ConnectionRecord[] = [];
  const proxy = await startEgressProxy({
    socketPath: join(dirs.make(), "proxy.sock"),
    policy: () => policy,
    onRecord: (record) => records.push(record),
    resolver: mapResolver(NAMES),
    ...options,
  });
  proxies.push(proxy);
  return { proxy, records, socketPath: proxy.socketPath, change: (next: NetworkSetting) => (policy = compilePolicy(next)) };
}

const allowBoth = () => ({ allow: [`files.test:${plain.port}`, `api.test:${secure.port}`] });

describe("N-2 N-4 the proxy lets allowed HTTP and HTTPS through, and records each connection", () => {
  it("forwards a plain-HTTP request in origin form to the checked address, and records host, method, path, rule and bytes", async () => {
    const { socketPath, records } = await proxyWith(allowBoth());
    const reply = await viaProxy(socketPath, `http://files.test:${plain.port}/hello?x=1`, { method: "POST", body: "ping", headers: { "proxy-connection": "keep-alive", "x-client": "1" } });
    expect(reply.status).toBe(200);
    const seen = JSON.parse(reply.body) as { method: string; url: string; rawHeaders: string[]; body: string };
    expect(seen).toMatchObject({ method: "POST", url: "/hello?x=1", body: "ping" });
    expect(seen.rawHeaders).toContain("x-client");
    expect(seen.rawHeaders.map((name) => name.toLowerCase())).not.toContain("proxy-connection");
    await poll(() => records.length === 1);
    expect(records[0]).toMatchObject({
      host: "files.test", port: plain.port, method: "POST", path: "/hello?x=1", decision: "allowed", rule: `network.allow files.test:${plain.port}`, address: "127.0.0.2", intercepted: false, bytesUp: 4, bytesDown: reply.body.length,
    });
    expect(records[0]!.durationMs).toBeGreaterThan(0);
  });

  it("tunnels HTTPS untouched: the client checks the server's own certificate and its own headers arrive as sent", async () => {
    const { socketPath, records } = await proxyWith(allowBoth());
    const reply = await httpsViaProxy(socketPath, "api.test", secure.port, "/data", { ca: ca.caPem, headers: { authorization: "Bearer client-own" } });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ url: "/data", rawHeaders: expect.arrayContaining(["authorization", "Bearer client-own"]) });
    await poll(() => records.length === 1);
    expect(records[0]).toMatchObject({ host: "api.test", port: secure.port, method: "CONNECT", decision: "allowed", intercepted: false, address: "127.0.0.3" });
    expect(records[0]!.bytesUp).toBeGreaterThan(100);
    expect(records[0]!.bytesDown).toBeGreaterThan(reply.body.length);
    expect(records[0]).not.toHaveProperty("path");
  });

  it("a policy change applies to the next connection, without restarting the proxy; a tunnel already open stays", async () => {
    const { socketPath, records, change } = await proxyWith({ allow: [] });
    const first = await connectThrough(socketPath, `files.test:${plain.port}`);
    sockets.push(first.socket);
    expect(first.statusLine).toContain("403");
    change(allowBoth());
    const second = await connectThrough(socketPath, `files.test:${plain.port}`);
    sockets.push(second.socket);
    expect(second.statusLine).toBe("HTTP/1.1 200 Connection established");
    change({ allow: [] });
    second.socket.write(`GET /still HTTP/1.1\r\nHost: files.test:${plain.port}\r\n\r\n`);
    const [answer] = (await once(second.socket, "data")) as [Buffer];
    expect(answer.toString()).toContain('"url":"/still"');
    const third = await connectThrough(socketPath, `files.test:${plain.port}`);
    sockets.push(third.socket);
    expect(third.statusLine).toContain("403");
    expect(records.map((record) => record.decision)).toEqual(["denied", "denied"]);
  });
});

describe("N-2 denials: a 403 whose one line names the host and the setting", () => {
  it("refuses a host not in the policy, for CONNECT and for plain HTTP, in the status line and the body", async () => {
    const { socketPath, records } = await proxyWith({ allow: [] });
    const line = "albedo: pypi.org is not allowed (not in network.allow); allow it: albedo network allow pypi.org";
    const answer = await rawExchange(socketPath, "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n");
    expect(answer.split("\r\n")[0]).toBe(`HTTP/1.1 403 ${line}`);
    expect(answer.endsWith(`\r\n\r\n${line}\n`)).toBe(true);
    const plainReply = await viaProxy(socketPath, "http://pypi.org/simple/");
    expect(plainReply).toMatchObject({ status: 403, body: `${line}\n` });
    await poll(() => records.length === 2);
    expect(records[0]).toMatchObject({ host: "pypi.org", port: 443, method: "CONNECT", decision: "denied", denial: "not-allowed", reason: "not in network.allow", bytesUp: 0, bytesDown: 0 });
    expect(records[1]).toMatchObject({ host: "pypi.org", port: 80, method: "GET", path: "/simple/", decision: "denied" });
  });

  it("refuses a deny entry over an allow, and network: false", async () => {
    const denied = await proxyWith({ allow: ["*.test"], deny: ["files.test"] });
    expect((await connectThrough(denied.socketPath, "files.test:443")).statusLine).toBe(
      "HTTP/1.1 403 albedo: files.test is not allowed (denied by network.deny files.test); remove files.test from network.deny to allow it",
    );
    const off = await proxyWith(false);
    expect((await viaProxy(off.socketPath, "http://files.test/")).body).toBe("albedo: files.test is not allowed (network is off); allow it: albedo network allow files.test\n");
  });

  it("refuses CONNECT to a port the entry does not allow", async () => {
    const { socketPath } = await proxyWith({ allow: ["files.test"] });
    const { statusLine } = await connectThrough(socketPath, "files.test:22");
    expect(statusLine).toBe("HTTP/1.1 403 albedo: files.test:22 is not allowed (port 22 is not in network.allow); allow it: albedo network allow files.test:22");
  });
});

describe("N-2 bypasses: IP literals, localhost, internal addresses behind names, a Host header that disagrees", () => {
  it("refuses IP literals and loopback forms a policy does not list", async () => {
    const { socketPath } = await proxyWith({ allow: ["files.test"] });
    for (const authority of [`127.0.0.2:${plain.port}`, "[::1]:443", "[::ffff:127.0.0.2]:443", "169.254.169.254:80", "localhost:443", "0x7f.1:443", "2130706433:443"]) {
      const { statusLine } = await connectThrough(socketPath, authority);
      expect(statusLine, authority).toMatch(/^HTTP\/1\.1 403 albedo: \S+ is not allowed \(not in network\.allow\)/);
    }
    expect((await viaProxy(socketPath, `http://127.0.0.2:${plain.port}/`)).status).toBe(403);
    expect((await viaProxy(socketPath, `http://[::ffff:7f00:2]:${plain.port}/`)).body).toContain("albedo: [::ffff:127.0.0.2]");
  });

  it("refuses an allowed name or literal whose address is internal unless an entry names that host and port exactly", async () => {
    const { socketPath, records } = await proxyWith({ allow: ["sneaky.test", "meta.test", "mixed.test", "files.test", "localhost", "::1", "::ffff:127.0.0.2", "mapped.test", "127.0.0.2"] });
    const expectations: Array<[string, string]> = [
      ["sneaky.test:443", "sneaky.test is not allowed (resolves to 10.0.0.1, a private address); allow it: albedo network allow sneaky.test:443"],
      ["meta.test:80", "meta.test is not allowed (resolves to 169.254.169.254, a link-local address); allow it: albedo network allow meta.test:80"],
      ["mixed.test:443", "mixed.test is not allowed (resolves to 10.0.0.1, a private address)"],
      ["files.test:443", "files.test is not allowed (resolves to 127.0.0.2, a loopback address)"],
      ["mapped.test:443", "mapped.test is not allowed (resolves to ::ffff:127.0.0.2, a loopback address (IPv4-mapped))"],
      ["[::1]:443", "::1 is not allowed (a loopback address); allow it: albedo network allow [::1]:443"],
      ["[::ffff:127.0.0.2]:443", "::ffff:127.0.0.2 is not allowed (a loopback address (IPv4-mapped))"],
      ["127.0.0.2:443", "127.0.0.2 is not allowed (a loopback address)"],
    ];
    for (const [authority, says] of expectations) {
      const { statusLine } = await connectThrough(socketPath, authority);
      expect(statusLine, authority).toContain(`403 albedo: ${says}`);
    }
    await poll(() => records.length === expectations.length);
    expect(records.every((record) => record.decision === "denied" && record.denial === "internal")).toBe(true);
  });

  it("resolves localhost with the host's own resolver and refuses its loopback address", async () => {
    const { socketPath } = await proxyWith({ allow: ["localhost"] }, { resolver: systemResolver });
    const { statusLine } = await connectThrough(socketPath, "localhost:443");
    expect(statusLine).toMatch(/^HTTP\/1\.1 403 albedo: localhost is not allowed \(resolves to (127\.0\.0\.1|::1), a loopback address\)/);
  });

  it("lets an exact host:port entry reach an internal address, and connects to the address it checked", async () => {
    const { socketPath, records } = await proxyWith({ allow: [`files.test:${plain.port}`, `127.0.0.2:${plain.port}`] });
    expect((await viaProxy(socketPath, `http://files.test:${plain.port}/a`)).status).toBe(200);
    expect((await viaProxy(socketPath, `http://127.0.0.2:${plain.port}/b`)).status).toBe(200);
    await poll(() => records.length === 2);
    expect(records.map((record) => [record.host, record.address, record.rule])).toEqual([
      ["files.test", "127.0.0.2", `network.allow files.test:${plain.port}`],
      ["127.0.0.2", "127.0.0.2", `network.allow 127.0.0.2:${plain.port}`],
    ]);
  });

  it("refuses a request whose Host header disagrees with its target", async () => {
    const { socketPath, records } = await proxyWith(allowBoth());
    const reply = await viaProxy(socketPath, `http://files.test:${plain.port}/`, { headers: { host: "api.test" } });
    expect(reply.status).toBe(400);
    expect(reply.body).toBe(`albedo: the Host header "api.test" does not match the request target "files.test:${plain.port}"; refused\n`);
    const { statusLine } = await connectThrough(socketPath, `files.test:${plain.port}`, { host: "evil.test:443" });
    expect(statusLine).toContain("400 albedo: the Host header");
    await poll(() => records.length === 2);
    expect(records[0]).toMatchObject({ host: "files.test", decision: "failed", reason: expect.stringContaining("Host header") });
  });

  it("refuses what is not a proxy request: origin form, an https:// URI, an Upgrade, a CONNECT without a port", async () => {
    const { socketPath } = await proxyWith(allowBoth());
    expect(await rawExchange(socketPath, "GET / HTTP/1.1\r\nHost: files.test\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 albedo: this is a proxy/);
    expect(await rawExchange(socketPath, "GET https://files.test/ HTTP/1.1\r\nHost: files.test\r\n\r\n")).toContain("400 albedo: an https:// URL goes through CONNECT");
    expect(await rawExchange(socketPath, `GET http://files.test:${plain.port}/ HTTP/1.1\r\nHost: files.test:${plain.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`)).toMatch(/^HTTP\/1\.1 501 /);
    expect((await connectThrough(socketPath, "files.test")).statusLine).toContain("400 albedo: CONNECT needs host:port");
    expect((await connectThrough(socketPath, "user@files.test:443")).statusLine).toContain("is not a host name");
  });
});

describe("N-6 bounds: request heads, idle and slow clients, lifetimes, many connections", () => {
  it("answers an absurdly long request line with 414 and an absurd header block with 431, naming the bound", async () => {
    const { socketPath, records } = await proxyWith(allowBoth());
    const huge = await rawExchange(socketPath, `GET http://files.test/${"a".repeat(100_000)} HTTP/1.1\r\nHost: files.test\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 414 albedo: the request line is over 8192 bytes \(MAX_REQUEST_LINE_BYTES\)/);
    const long = await rawExchange(socketPath, `CONNECT ${"a".repeat(9000)}.test:443 HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(long).toMatch(/^HTTP\/1\.1 414 albedo: the request line is \d+ bytes; at most 8192 \(MAX_REQUEST_LINE_BYTES\)/);
    const block = await rawExchange(socketPath, `GET http://files.test/ HTTP/1.1\r\nHost: files.test\r\nX-Big: ${"b".repeat(100_000)}\r\n\r\n`);
    expect(block).toMatch(/^HTTP\/1\.1 431 albedo: the request head is over 32768 bytes \(MAX_HEADER_BLOCK_BYTES\)/);
    const many = Array.from({ length: 200 }, (_, index) => `X-${index}: 1\r\n`).join("");
    expect(await rawExchange(socketPath, `GET http://files.test/ HTTP/1.1\r\nHost: files.test\r\n${many}\r\n`)).toMatch(/^HTTP\/1\.1 431 albedo: the request has over 128 headers \(MAX_HEADER_COUNT\)/);
    await poll(() => records.length >= 4);
    expect(records).toHaveLength(4);
    expect(records.every((record) => record.decision === "failed" && record.host === "")).toBe(true);
  });

  it("answers a client that sends half a head with 408 after the headers deadline", async () => {
    const { socketPath } = await proxyWith(allowBoth(), { bounds: { headersTimeoutMs: 300, sweepIntervalMs: 50 } });
    const socket = netConnect(socketPath);
    sockets.push(socket);
    socket.write("GET http://files.test/ HTTP/1.1\r\nHost: fi");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    await once(socket, "close");
    expect(Buffer.concat(chunks).toString()).toMatch(/^HTTP\/1\.1 408 albedo: the request head took over 300 ms \(HEADERS_TIMEOUT_MS\)/);
  });

  it("closes an idle tunnel after the idle bound and a busy one at the end of its lifetime", async () => {
    const { socketPath } = await proxyWith(allowBoth(), { bounds: { idleTimeoutMs: 400, lifetimeMs: 1_500, sweepIntervalMs: 50 } });
    const idle = await connectThrough(socketPath, `files.test:${plain.port}`);
    const busy = await connectThrough(socketPath, `files.test:${plain.port}`);
    sockets.push(idle.socket, busy.socket);
    let busyClosed = false;
    busy.socket.on("close", () => (busyClosed = true));
    busy.socket.on("data", () => undefined);
    const started = Date.now();
    const keepBusy = setInterval(() => busy.socket.write(`GET / HTTP/1.1\r\nHost: files.test:${plain.port}\r\n\r\n`), 100);
    try {
      await once(idle.socket, "close");
      const idleFor = Date.now() - started;
      expect(idleFor).toBeGreaterThanOrEqual(350);
      expect(busyClosed).toBe(false);
      await poll(() => busyClosed);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    } finally {
      clearInterval(keepBusy);
    }
  });

  it("holds thousands of idle connections within its bound, dropping the idle longest or refusing, and answers another request meanwhile", async () => {
    const { proxy, socketPath } = await proxyWith(allowBoth(), { bounds: { evictableIdleMs: 50 } });
    const answers = new Map<Socket, string>();
    const opened: Socket[] = [];
    let meanwhile: Promise<{ status: number }> | undefined;
    let most = 0;
    // In batches the listen backlog holds: past it a Unix socket's connect fails with EAGAIN.
    for (let batch = 0; batch < 20; batch += 1) {
      const connected = Array.from({ length: 100 }, () => {
        const socket = netConnect(socketPath);
        socket.on("data", (chunk: Buffer) => answers.set(socket, (answers.get(socket) ?? "") + chunk.toString()));
        sockets.push(socket);
        opened.push(socket);
        return Promise.race([once(socket, "connect"), once(socket, "close")]).catch(() => undefined);
      });
      await Promise.all(connected);
      most = Math.max(most, proxy.connections());
      if (batch === 10) meanwhile = viaProxy(socketPath, `http://files.test:${plain.port}/meanwhile`);
    }
    await poll(() => {
      most = Math.max(most, proxy.connections());
      return opened.filter((socket) => socket.destroyed).length + proxy.connections() >= 2_000;
    }, { what: "every connection held or closed" });
    expect(most).toBeLessThanOrEqual(256);
    expect(proxy.connections()).toBeLessThanOrEqual(256);
    const closed = opened.filter((socket) => socket.destroyed);
    expect(closed.length).toBeGreaterThanOrEqual(2_000 - 256);
    // A closed one was either dropped as the idle longest (no answer) or refused with the 503 line.
    for (const socket of closed) expect(answers.get(socket) ?? "").toMatch(/^$|^HTTP\/1\.1 503 albedo: the proxy holds 256 busy connections/);
    expect([200, 503]).toContain((await meanwhile!).status);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await viaProxy(socketPath, `http://files.test:${plain.port}/after`)).status).toBe(200);
  });

  it("refuses a new connection with a 503 line when every one it holds is busy", async () => {
    const { proxy, socketPath } = await proxyWith(allowBoth(), { bounds: { maxConnections: 3, evictableIdleMs: 60_000 } });
    for (let index = 0; index < 3; index += 1) sockets.push((await connectThrough(socketPath, `files.test:${plain.port}`)).socket);
    expect(proxy.connections()).toBe(3);
    expect(await rawExchange(socketPath, "")).toMatch(/^HTTP\/1\.1 503 albedo: the proxy holds 3 busy connections \(MAX_PROXY_CONNECTIONS\)/);
  });

  it("survives an upstream that accepts and never answers, and one that refuses; other requests go on", async () => {
    const silent = createNetServer((socket) => socket.on("error", () => undefined));
    silent.listen(0, "127.0.0.4");
    await once(silent, "listening");
    const silentPort = (silent.address() as AddressInfo).port;
    const closedPort = silentPort === 65535 ? 65534 : silentPort + 1;
    try {
      const resolver = mapResolver({ ...NAMES, "silent.test": "127.0.0.4", "closed.test": "127.0.0.5" });
      const { socketPath, records } = await proxyWith({ allow: [`silent.test:${silentPort}`, `closed.test:${closedPort}`, `files.test:${plain.port}`] }, { resolver, bounds: { idleTimeoutMs: 300, sweepIntervalMs: 50 } });
      const hanging = viaProxy(socketPath, `http://silent.test:${silentPort}/`).catch((error: Error) => error);
      const refused = await viaProxy(socketPath, `http://closed.test:${closedPort}/`);
      expect(refused.status).toBe(502);
      expect(refused.body).toMatch(new RegExp(`^albedo: cannot reach closed\\.test:${closedPort} \\(127\\.0\\.0\\.5: ECONNREFUSED\\)`));
      expect((await viaProxy(socketPath, `http://files.test:${plain.port}/`)).status).toBe(200);
      expect(await hanging).toBeInstanceOf(Error);
      await poll(() => records.length === 3);
      expect(records.find((record) => record.host === "silent.test")).toMatchObject({ decision: "failed" });
    } finally {
      silent.close();
    }
  });

  it("fails a lookup that does not answer within its deadline, and a name with no address, with a 502 line", async () => {
    const never = mapResolver({});
    const stuck = async () => new Promise<never>(() => undefined);
    const { socketPath } = await proxyWith({ allow: ["slow.test", "none.test"] }, { resolver: (name, signal) => (name === "slow.test" ? stuck() : never(name, signal)), bounds: { lookupTimeoutMs: 200 } });
    expect((await viaProxy(socketPath, "http://slow.test/")).body).toBe("albedo: cannot reach slow.test (the lookup took over 200 ms (DNS_LOOKUP_TIMEOUT_MS))\n");
    expect((await viaProxy(socketPath, "http://none.test/")).body).toBe("albedo: cannot reach none.test (no such host)\n");
  });

  it("bounds the host resolver's lookups across the process: past the queue a lookup fails at once", async () => {
    const results = await Promise.allSettled(Array.from({ length: 200 }, () => systemResolver("localhost", new AbortController().signal)));
    const refused = results.filter((result) => result.status === "rejected").map((result) => String((result as PromiseRejectedResult).reason));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toContain("name lookups are already waiting (MAX_LOOKUPS_QUEUED)");
    expect(results.filter((result) => result.status === "fulfilled").length).toBeGreaterThanOrEqual(66);
  });
});

describe("N-2 the proxy's socket", () => {
  it("refuses a path too long for a Unix socket or taken by a file, and replaces a stale socket", async () => {
    const dir = dirs.make();
    const base = { policy: () => compilePolicy(false), onRecord: () => undefined };
    await expect(startEgressProxy({ ...base, socketPath: join(dir, "x".repeat(120)) })).rejects.toThrow(EgressProxyError);
    writeFileSync(join(dir, "file"), "");
    await expect(startEgressProxy({ ...base, socketPath: join(dir, "file") })).rejects.toThrow("is taken by something that is not a socket");
    const stale = createNetServer();
    stale.listen(join(dir, "stale.sock"));
    await once(stale, "listening");
    // A socket file left by a process that died: closing a server would remove it, so its handle is dropped unclosed.
    (stale as unknown as { _handle: { close(): void } | null })._handle?.close();
    const proxy = await startEgressProxy({ ...base, socketPath: join(dir, "stale.sock") });
    proxies.push(proxy);
    expect((await viaProxy(proxy.socketPath, "http://files.test/")).status).toBe(403);
  });
});
