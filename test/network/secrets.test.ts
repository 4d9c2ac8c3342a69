/**
 * Secrets stay on the host: the local CA made once in a directory, and the proxy terminating TLS
 * only for hosts listed under `secrets`, setting their headers from host variables and checking
 * the upstream's certificate itself (a test CA given as upstream_ca). Real TLS on both sides.
 */
import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CA_BUNDLE_FILE, compilePolicy, LocalCaError, openLocalCa, startEgressProxy, type ConnectionRecord, type EgressProxy, type LocalCa, type NetworkSetting } from "../../src/network/index.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";
import { connectThrough, echoHandler, headerValues, httpsViaProxy, makeTestCa, mapResolver, requestWith, startServer, TunnelAgent, type TestCa, type TestServer } from "./support.js";

const dirs = tempDirs("alb-sec-");
const proxies: EgressProxy[] = [];
let testCa: TestCa;
let api: TestServer;
let authority: LocalCa;
let stateDir: string;
let bundle: string;

const SECRET = "s3cret-token-value";
const KEY = "key-value-42";

beforeAll(async () => {
  testCa = makeTestCa(dirs.make());
  api = await startServer("127.0.0.3", echoHandler, testCa.serverCert(["api.test", "plain.test"]));
  stateDir = dirs.make();
  authority = await openLocalCa(stateDir);
  bundle = readFileSync(authority.bundlePath, "utf8");
});

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

afterAll(async () => {
  await api.close();
  dirs.cleanup();
});

const secrets = (extra: Partial<Exclude<NetworkSetting, boolean>> = {}): NetworkSetting => ({
  allow: [`api.test:${api.port}`, `plain.test:${api.port}`],
  secrets: { "api.test": { headers: { Authorization: { from_env: "API_TOKEN", format: "Bearer {}" }, "X-Api-Key": { from_env: "API_KEY" } } } },
  upstream_ca: testCa.caPath,
  ...extra,
});

async function proxyWith(setting: NetworkSetting, options: { env?: NodeJS.ProcessEnv; authority?: LocalCa | undefined; headersTimeoutMs?: number } = {}) {
  const records: ConnectionRecord[] = [];
  const policy = compilePolicy(setting);
  const proxy = await startEgressProxy({
    socketPath: join(dirs.make(), "proxy.sock"),
    policy: () => policy,
    onRecord: (record) => records.push(record),
    resolver: mapResolver({ "api.test": "127.0.0.3", "plain.test": "127.0.0.3" }),
    env: options.env ?? { API_TOKEN: SECRET, API_KEY: KEY },
    ...("authority" in options ? (options.authority ? { authority: options.authority } : {}) : { authority }),
    ...(options.headersTimeoutMs ? { bounds: { headersTimeoutMs: options.headersTimeoutMs } } : {}),
  });
  proxies.push(proxy);
  return { proxy, records, socketPath: proxy.socketPath };
}

describe("N-3 the local CA: made once, its key private, a bundle for the sandbox", () => {
  it("keeps the key to the user, the certificate and bundle readable, and gives the same CA when opened again", async () => {
    expect(statSync(join(stateDir, "network-ca-key.pem")).mode & 0o777).toBe(0o600);
    expect(statSync(authority.certPath).mode & 0o777).toBe(0o644);
    expect(statSync(authority.bundlePath).mode & 0o777).toBe(0o644);
    expect(authority.bundlePath).toBe(join(stateDir, CA_BUNDLE_FILE));
    const cert = new X509Certificate(readFileSync(authority.certPath));
    expect(cert.ca).toBe(true);
    expect(cert.subject).toContain("CN=albedo local network CA");
    expect(readFileSync(authority.certPath, "utf8")).not.toContain("PRIVATE KEY");
    expect(bundle).not.toContain("PRIVATE KEY");
    expect(bundle).toContain(readFileSync(authority.certPath, "utf8").trim());
    expect(bundle.match(/BEGIN CERTIFICATE/g)!.length).toBeGreaterThan(10);
    const again = await openLocalCa(stateDir);
    expect(readFileSync(again.certPath, "utf8")).toBe(readFileSync(authority.certPath, "utf8"));
  });

  it("mints a leaf for a host that Node checks against the CA, and refuses a key file that is not a CA", async () => {
    const { socketPath } = await proxyWith(secrets());
    const { socket } = await connectThrough(socketPath, `api.test:${api.port}`);
    const secure = tlsConnect({ socket, servername: "api.test", ca: bundle });
    await once(secure, "secureConnect");
    const leaf = new X509Certificate(secure.getPeerCertificate(true).raw);
    secure.destroy();
    expect(leaf.subjectAltName).toBe("DNS:api.test");
    expect(leaf.verify(new X509Certificate(readFileSync(authority.certPath)).publicKey)).toBe(true);
    expect(leaf.checkHost("api.test")).toBe("api.test");

    const broken = dirs.make();
    writeFileSync(join(broken, "network-ca-key.pem"), "not a key", { mode: 0o600 });
    await expect(openLocalCa(broken)).rejects.toThrow(LocalCaError);
    chmodSync(join(stateDir, "network-ca-key.pem"), 0o644);
    await openLocalCa(stateDir);
    expect(statSync(join(stateDir, "network-ca-key.pem")).mode & 0o777).toBe(0o600);
  });
});

describe("N-3 secrets are added by the proxy for their host only, replacing what the client sent", () => {
  it("sets the configured headers once each, replacing the client's own, and keeps the other headers", async () => {
    const { socketPath, records } = await proxyWith(secrets());
    const agent = new TunnelAgent(socketPath, bundle);
    try {
      const headers = { authorization: "Bearer kernel-made", "X-API-KEY": "kernel-key", "x-other": "kept" };
      const first = await requestWith(agent, `https://api.test:${api.port}/whoami?q=1`, { headers });
      const second = await requestWith(agent, `https://api.test:${api.port}/again`, { method: "POST", body: "hello", headers });
      for (const reply of [first, second]) {
        expect(reply.status).toBe(200);
        const seen = JSON.parse(reply.body) as { rawHeaders: string[] };
        expect(headerValues(seen.rawHeaders, "authorization")).toEqual([`Bearer ${SECRET}`]);
        expect(headerValues(seen.rawHeaders, "x-api-key")).toEqual([KEY]);
        expect(headerValues(seen.rawHeaders, "x-other")).toEqual(["kept"]);
      }
      expect(JSON.parse(second.body)).toMatchObject({ method: "POST", url: "/again", body: "hello" });
    } finally {
      agent.destroy();
    }
    await poll(() => records.length === 2);
    expect(records.map(({ method, path, intercepted, decision, address }) => ({ method, path, intercepted, decision, address }))).toEqual([
      { method: "GET", path: "/whoami?q=1", intercepted: true, decision: "allowed", address: "127.0.0.3" },
      { method: "POST", path: "/again", intercepted: true, decision: "allowed", address: "127.0.0.3" },
    ]);
    expect(records[1]!.bytesUp).toBe(5);
    expect(JSON.stringify(records)).not.toContain(SECRET);
    expect(JSON.stringify(records)).not.toContain(KEY);
  });

  it("tunnels a host without secrets untouched: the client sees the server's own certificate and its header arrives", async () => {
    const { socketPath, records } = await proxyWith(secrets());
    const reply = await httpsViaProxy(socketPath, "plain.test", api.port, "/", { ca: testCa.caPem, headers: { authorization: "Bearer kernel-made" } });
    expect(headerValues((JSON.parse(reply.body) as { rawHeaders: string[] }).rawHeaders, "authorization")).toEqual(["Bearer kernel-made"]);
    await poll(() => records.length === 1);
    expect(records[0]).toMatchObject({ host: "plain.test", method: "CONNECT", intercepted: false });
  });

  it("answers 502 naming the variable, never a value, when a secret's variable is not set on the host", async () => {
    const { socketPath, records } = await proxyWith(secrets(), { env: { API_TOKEN: SECRET } });
    const agent = new TunnelAgent(socketPath, bundle);
    try {
      const reply = await requestWith(agent, `https://api.test:${api.port}/`);
      expect(reply.status).toBe(502);
      expect(reply.body).toBe(`albedo: cannot reach api.test:${api.port} (the variable API_KEY that network.secrets names for api.test is not set on the host)\n`);
      expect(reply.body).not.toContain(SECRET);
    } finally {
      agent.destroy();
    }
    await poll(() => records.length === 1);
    expect(JSON.stringify(records)).not.toContain(SECRET);
  });

  it("checks the upstream's certificate itself: without upstream_ca a test CA's server is not trusted", async () => {
    const { upstream_ca: _dropped, ...withoutCa } = secrets() as Exclude<NetworkSetting, boolean>;
    const { socketPath } = await proxyWith(withoutCa);
    const agent = new TunnelAgent(socketPath, bundle);
    try {
      const reply = await requestWith(agent, `https://api.test:${api.port}/`);
      expect(reply.status).toBe(502);
      expect(reply.body).toMatch(/^albedo: cannot reach api\.test:\d+ \(its certificate is not trusted \(\w+\); name its CA in network\.upstream_ca\)/);
    } finally {
      agent.destroy();
    }
    const missing = await proxyWith(secrets({ upstream_ca: join(stateDir, "missing.pem") }));
    const other = new TunnelAgent(missing.socketPath, bundle);
    try {
      expect((await requestWith(other, `https://api.test:${api.port}/`)).body).toContain(`(network.upstream_ca ${join(stateDir, "missing.pem")} cannot be read (ENOENT))`);
    } finally {
      other.destroy();
    }
  });

  it("refuses a request inside the tunnel whose Host names another host", async () => {
    const { socketPath } = await proxyWith(secrets());
    const agent = new TunnelAgent(socketPath, bundle);
    try {
      const reply = await requestWith(agent, `https://api.test:${api.port}/`, { headers: { host: "plain.test" } });
      expect(reply.status).toBe(400);
      expect(reply.body).toContain('the Host header "plain.test" does not match');
    } finally {
      agent.destroy();
    }
  });

  it("records a client that does not trust the local CA, and fails a secrets host with a 502 line when the proxy has no CA", async () => {
    const { socketPath, records } = await proxyWith(secrets());
    await expect(httpsViaProxy(socketPath, "api.test", api.port, "/", { ca: testCa.caPem })).rejects.toThrow();
    await poll(() => records.length === 1);
    expect(records[0]).toMatchObject({ host: "api.test", method: "CONNECT", intercepted: true, decision: "failed", reason: expect.stringContaining("a client that does not trust the local CA does so") });
    const bare = await proxyWith(secrets(), { authority: undefined });
    const { statusLine } = await connectThrough(bare.socketPath, `api.test:${api.port}`);
    expect(statusLine).toBe(`HTTP/1.1 502 albedo: cannot reach api.test:${api.port} (it carries secrets, and the proxy was given no local CA to speak TLS for it)`);
  });

  it("closes an intercepted tunnel whose client sends no whole request head within the headers deadline", async () => {
    const { socketPath, records } = await proxyWith(secrets(), { headersTimeoutMs: 400 });
    const { socket } = await connectThrough(socketPath, `api.test:${api.port}`);
    const secure = tlsConnect({ socket, servername: "api.test", ca: bundle });
    await once(secure, "secureConnect");
    secure.on("error", () => undefined);
    secure.write(`GET /slow HTTP/1.1\r\nHost: api.test:${api.port}\r\nX-Half: `);
    const started = Date.now();
    await once(secure, "close");
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    await poll(() => records.length === 1);
    expect(records[0]).toMatchObject({ method: "CONNECT", intercepted: true, decision: "failed" });
  });
});
