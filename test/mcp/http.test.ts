/**
 * The Streamable HTTP client (M-2, M-5, B): the Node reference server on loopback, and hostile
 * listeners written here answering 500, 401 and a redirect to another host that must not be
 * followed (the second listener must see no request, so the header never reaches it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { tempDirs } from "../support/tempDirs.js";
import { hubs, logSink, NEVER, resolved } from "./support.js";

const temps = tempDirs("alb-mcp-http-");
const made = hubs();
const SECRET = "Bearer tok-9f8e7d6c5b4a";
const env = { ...process.env, ALB_TEST_MCP_TOKEN: SECRET };
const auth = { Authorization: { from_env: "ALB_TEST_MCP_TOKEN" } };

let everything: ChildProcess;
let everythingUrl: string;
const listeners: Server[] = [];

beforeAll(async () => {
  everything = spawn(process.execPath, [resolve("test/mcp/servers/everything_http.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  const [line] = await createInterface({ input: everything.stdout! })[Symbol.asyncIterator]().next().then((next) => [next.value as string]);
  everythingUrl = `http://127.0.0.1:${line!.trim()}/mcp`;
});
afterEach(() => made.closeAll());
afterAll(async () => {
  everything.stdin!.end();
  await new Promise((done) => (everything.exitCode === null ? everything.once("exit", done) : done(undefined)));
  await Promise.all(listeners.map((server) => new Promise((done) => server.close(done))));
  temps.cleanup();
});

/** A loopback listener answering every request with `answer`; `seen` holds each request's headers. */
async function listener(answer: (headers: IncomingHttpHeaders) => { status: number; headers?: Record<string, string>; body?: string }) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    const { status, headers, body } = answer(req.headers);
    res.writeHead(status, headers).end(body);
  });
  listeners.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

describe("M-2 a Streamable HTTP server", () => {
  it("starts with the resolved headers, lists its tools and answers calls", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { web: { url: everythingUrl, headers: auth } }, env));
    expect(hub.servers()[0]).toMatchObject({ name: "web", status: "running" });
    expect(hub.tools("web").map((tool) => tool.name)).toContain("web.echo");
    expect((await hub.call("web.echo", { message: "over http" }, { signal: NEVER })).value).toBe("Echo: over http");
    expect((await hub.call("web.get-structured-content", { location: "New York" }, { signal: NEVER })).value).toMatchObject({ temperature: 33 });
    await expect(hub.call("web.echo", { message: [] }, { signal: NEVER })).rejects.toMatchObject({ code: "invalid_params", message: expect.stringContaining("/message: must be string") });
  });
});

describe("B a Streamable HTTP server that answers badly", () => {
  it("a 500 whose body echoes the Authorization header is failed, quoting the body with the secret redacted", async () => {
    const bad = await listener((headers) => ({ status: 500, body: `internal error; you sent ${headers.authorization}` }));
    const { log, lines } = logSink();
    const hub = made.make({ log });
    await hub.start(await resolved(temps, { five: { url: bad.url, headers: auth } }, env));
    expect(bad.seen[0]!.authorization).toBe(SECRET);
    const [status] = hub.servers();
    expect(status!.status).toBe("failed");
    expect(status!.diagnostics.join("\n")).toContain("you sent [redacted]");
    expect([JSON.stringify(hub.servers()), ...lines].join("\n")).not.toContain("tok-9f8e7d6c5b4a");
  });

  it("a 401 is failed with a diagnostic", async () => {
    const bad = await listener(() => ({ status: 401, body: "who are you" }));
    const hub = made.make();
    await hub.start(await resolved(temps, { four: { url: bad.url, headers: auth } }, env));
    expect(hub.servers()[0]).toMatchObject({ status: "failed" });
    expect(hub.servers()[0]!.diagnostics.join("\n")).toMatch(/401|nauthorized/);
  });

  it("a redirect to another host is not followed: the diagnostic names where it pointed and the other host gets nothing", async () => {
    const other = await listener(() => ({ status: 200, body: "{}" }));
    const redirecting = await listener(() => ({ status: 307, headers: { location: `${other.url}?token=abc` } }));
    const hub = made.make();
    await hub.start(await resolved(temps, { moved: { url: redirecting.url, headers: auth } }, env));
    expect(redirecting.seen).toHaveLength(1);
    expect(other.seen).toEqual([]);
    const diagnostics = hub.servers()[0]!.diagnostics.join("\n");
    expect(hub.servers()[0]!.status).toBe("failed");
    expect(diagnostics).toContain(`HTTP 307 redirecting to ${other.url}; redirects are not followed`);
    expect(diagnostics).not.toContain("token=abc");
  });
});
