/**
 * albedo's MCP server over Streamable HTTP at /mcp on a real daemon process, driven by the official
 * TypeScript SDK Client (StreamableHTTPClientTransport), the official Python SDK client and raw
 * requests: the bearer token, Host and Origin, one daemon session per MCP session, DELETE, idle.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_MCP_BODY_BYTES, MCP_PATH } from "../../src/daemon/index.js";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { runProgram } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { mcpDaemon, processesMentioning, stopMcpDaemon } from "./support.js";

let dirs: Dirs;
let daemon: DaemonProcess;
const open: Client[] = [];

beforeAll(async () => void ({ dirs, daemon } = await mcpDaemon()), 120_000);

afterAll(async () => await stopMcpDaemon({ dirs, daemon }, open));

const endpoint = (workspace = dirs.workspace) => `${daemon.url}${MCP_PATH}?workspace=${encodeURIComponent(workspace)}`;
const text = (result: CallToolResult) => result.content.filter((part) => part.type === "text").map((part) => (part as { text: string }).text).join("");

/** An SDK client connected to the daemon's /mcp, with the token in Authorization. */
async function connect(url = endpoint(), token = daemon.token): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "albedo-http-test", version: "1.0.0" });
  await client.connect(transport);
  open.push(client);
  return { client, transport };
}

const python = async (client: Client, code: string) => (await client.callTool({ name: "python", arguments: { code } })) as CallToolResult;

/** The daemon's sessions as GET /sessions lists them. */
async function sessionIds(): Promise<string[]> {
  const listed = await call(daemon, "GET", "/sessions");
  return (listed.body.sessions as { id: string }[]).map((session) => session.id);
}

/** A raw initialize POST to /mcp; `headers` add to or override the defaults. */
function rawInitialize(url: string, headers: Record<string, string> = {}, body?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: body ?? JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
  });
}

describe("X P-1 P-2 the daemon's /mcp over Streamable HTTP", () => {
  it("serves the session's kernel with its state, skills and tools; each MCP session is a daemon session listed with the others", async () => {
    const before = await sessionIds();
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["python", "skill", "reload"]);
    expect(text(await python(client, "x = 6 * 7\nx"))).toBe("42\n");
    expect(text(await python(client, "print(x + 1, 'skills' in dir())"))).toBe("43 True\n");
    const loaded = (await client.callTool({ name: "skill", arguments: { name: "demo" } })) as CallToolResult;
    expect(text(loaded)).toContain("Tidy up.");
    const after = await sessionIds();
    expect(after.length).toBe(before.length + 1);
    const mine = after.find((id) => !before.includes(id))!;
    const resource = await call(daemon, "GET", `/sessions/${mine}`);
    expect(resource.body.workspace).toBe(dirs.workspace);

    // A second MCP session is a second kernel: no state shared.
    const other = await connect();
    expect(text(await python(other.client, "print(globals().get('x', 'unset'))"))).toBe("unset\n");
    expect((await sessionIds()).length).toBe(before.length + 2);
  }, 120_000);

  it("a cancelled call interrupts its cell over HTTP too; the state stays", async () => {
    const { client } = await connect();
    await python(client, "y = 7");
    const controller = new AbortController();
    const running = client.callTool({ name: "python", arguments: { code: "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    interrupted = True\n    raise" } }, CallToolResultSchema, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    controller.abort("the user pressed stop");
    await expect(running).rejects.toThrow();
    let seen = "";
    await poll(async () => (seen = text(await python(client, "print(globals().get('interrupted', False), y)"))).startsWith("True"), { what: "the interrupted flag", timeoutMs: 30_000, intervalMs: 200 });
    expect(seen).toBe("True 7\n");
  }, 120_000);

  it("DELETE ends the MCP session and closes its daemon session and kernel; the id is then unknown", async () => {
    const before = await sessionIds();
    const { client, transport } = await connect();
    await python(client, "v = 1");
    const mine = (await sessionIds()).find((id) => !before.includes(id))!;
    const pid = (await call(daemon, "GET", `/sessions/${mine}`)).body.kernel.pid as number;
    expect(pid).toBeGreaterThan(0);
    const id = transport.sessionId!;
    await transport.terminateSession();
    await poll(async () => !(await sessionIds()).includes(mine), { what: "the daemon session to close", timeoutMs: 30_000 });
    const again = await fetch(daemon.url + MCP_PATH, {
      method: "POST",
      headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }),
    });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { code: string }).code).toBe("mcp_session_not_found");
    await poll(() => !existsSync(`/proc/${pid}`), { what: "the kernel process to be gone", timeoutMs: 30_000 });
  }, 120_000);

  it("closing the daemon session over REST ends its MCP session", async () => {
    const before = await sessionIds();
    const { client } = await connect();
    await python(client, "z = 1");
    const mine = (await sessionIds()).find((id) => !before.includes(id))!;
    expect((await call(daemon, "DELETE", `/sessions/${mine}`)).status).toBe(204);
    await expect(python(client, "print(z)")).rejects.toThrow(/404|not found|session/i);
  }, 120_000);
});

describe("X P-1 B the daemon's /mcp refuses what it must", () => {
  it("without the token, or with a wrong one: 401, and no session opens", async () => {
    const before = await sessionIds();
    for (const headers of [{ authorization: "" }, { authorization: "Bearer wrong" }]) {
      const answer = await rawInitialize(endpoint(), headers);
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { code: string }).code).toBe("unauthorized");
    }
    await expect(connect(endpoint(), "wrong")).rejects.toThrow();
    expect(await sessionIds()).toEqual(before);
  });

  it("a foreign Origin or Host (a web page, DNS rebinding) is refused with 403; the daemon's own origin is served", async () => {
    const port = new URL(daemon.url).port;
    for (const headers of [{ origin: "http://evil.example" }, { origin: `http://127.0.0.1:${Number(port) + 1}` }, { origin: "null" }]) {
      const answer = await rawInitialize(endpoint(), headers);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(((await answer.json()) as { code: string }).code).toBe("origin_not_allowed");
    }
    // fetch sets Host itself; a raw request names another.
    const rebound = await rawHttp(port, `POST ${MCP_PATH}?workspace=${encodeURIComponent(dirs.workspace)} HTTP/1.1\r\nHost: evil.example:${port}\r\nAuthorization: Bearer ${daemon.token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    expect(rebound).toMatch(/^HTTP\/1\.1 403/);
    expect(rebound).toContain("origin_not_allowed");
    const own = await rawInitialize(endpoint(), { origin: `http://127.0.0.1:${port}` });
    expect(own.status).toBe(200);
    const id = own.headers.get("mcp-session-id")!;
    await own.body?.cancel();
    expect((await fetch(daemon.url + MCP_PATH, { method: "DELETE", headers: { authorization: `Bearer ${daemon.token}`, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" } })).status).toBe(200);
  }, 60_000);

  it("names what is wrong: no workspace, a relative or missing one, a request before initialize, an unknown session, a body over MAX_MCP_BODY_BYTES", async () => {
    const before = await sessionIds();
    const cases: [string, Promise<Response>, number, string, RegExp][] = [
      ["no workspace", rawInitialize(daemon.url + MCP_PATH), 400, "invalid_query", /\?workspace=/],
      ["relative", rawInitialize(`${daemon.url}${MCP_PATH}?workspace=work`), 400, "invalid_query", /absolute/],
      ["missing", rawInitialize(endpoint(join(dirs.root, "nowhere"))), 400, "invalid_query", /not a directory/],
      ["before initialize", rawInitialize(endpoint(), {}, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })), 400, "mcp_session_required", /initialize first/],
      ["unknown session", rawInitialize(endpoint(), { "mcp-session-id": "0d1f9c1e-0000-4000-8000-000000000000" }), 404, "mcp_session_not_found", /initialize a new one/],
      ["GET without a session", fetch(endpoint(), { headers: { authorization: `Bearer ${daemon.token}`, accept: "text/event-stream" } }), 400, "mcp_session_required", /Mcp-Session-Id/],
      ["too large", rawInitialize(endpoint(), {}, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: "x".repeat(MAX_MCP_BODY_BYTES) } })), 413, "payload_too_large", /MAX_MCP_BODY_BYTES/],
      ["not JSON", rawInitialize(endpoint(), {}, "{nope"), 400, "invalid_json", /not valid JSON/],
    ];
    for (const [what, answer, status, code, detail] of cases) {
      const got = await answer;
      const body = (await got.json()) as { code: string; detail: string };
      expect([what, got.status, body.code], JSON.stringify(body)).toEqual([what, status, code]);
      expect(body.detail).toMatch(detail);
    }
    expect(await sessionIds()).toEqual(before);
  }, 60_000);
});

describe("X P-1 the daemon's /mcp: idle sessions close, busy ones stay, shutdown leaves nothing", () => {
  let idleDirs: Dirs;
  let idleDaemon: DaemonProcess;

  beforeAll(async () => {
    idleDirs = await makeDirs();
    idleDaemon = await startDaemon(idleDirs, ["--listen", "127.0.0.1:0", "--pool", "0", "--mcp-idle", "2"]);
  }, 120_000);

  afterAll(async () => {
    if (idleDaemon) await killDaemon(idleDaemon, "SIGTERM");
    await idleDirs?.cleanup();
  });

  const list = async () => ((await call(idleDaemon, "GET", "/sessions")).body.sessions as { id: string }[]).map((s) => s.id);

  const idleUrl = () => `${idleDaemon.url}${MCP_PATH}?workspace=${encodeURIComponent(idleDirs.workspace)}`;

  it("a call running longer than --mcp-idle keeps its session; once nothing is in flight for --mcp-idle it closes", async () => {
    // Raw requests, without the event stream an SDK client holds open: only the call is in flight.
    const post = (body: object, id?: string) => fetch(idleUrl(), {
      method: "POST",
      headers: { authorization: `Bearer ${idleDaemon.token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", ...(id ? { "mcp-session-id": id } : {}) },
      body: JSON.stringify(body),
    });
    const init = await post({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    const id = init.headers.get("mcp-session-id")!;
    await init.text();
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, id)).text();
    const slept = await (await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "python", arguments: { code: "import time; time.sleep(4); print('slept')" } } }, id)).text();
    expect(slept).toContain("slept");
    expect((await list()).length).toBe(1);
    await poll(async () => (await list()).length === 0, { what: "the idle MCP session to close", timeoutMs: 30_000, intervalMs: 250 });
    expect((await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, id)).status).toBe(404);
  }, 120_000);

  it("a client holding its event stream open is not idle; once it goes away without DELETE its session closes", async () => {
    const { client } = await connect(idleUrl(), idleDaemon.token);
    await python(client, "kept = 5");
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(text(await python(client, "print(kept)"))).toBe("5\n");
    expect((await list()).length).toBe(1);
    await client.close();
    await poll(async () => (await list()).length === 0, { what: "the abandoned MCP session to close", timeoutMs: 30_000, intervalMs: 250 });
  }, 120_000);

  it("SIGTERM with an MCP session open exits cleanly and leaves no kernel behind", async () => {
    const { client } = await connect(idleUrl(), idleDaemon.token);
    await python(client, "w = 1");
    expect(processesMentioning(idleDirs.root).length).toBeGreaterThan(0);
    await killDaemon(idleDaemon, "SIGTERM");
    expect((await idleDaemon.exited).code).toBe(0);
    await poll(() => processesMentioning(idleDirs.root).length === 0, { what: "the kernel to be gone", timeoutMs: 30_000 });
  }, 120_000);
});

describe.skipIf(!HAVE_TEST_VENV)("X P-1 P-2 P-3 P-4 the daemon's /mcp with the official Python SDK client", () => {
  it("initializes, lists the tools, runs cells with state and an image, gets a prompt and reads a resource", async () => {
    const run = await runProgram(TEST_VENV_PYTHON, [join(import.meta.dirname, "clients", "python_client.py"), "http", endpoint(), daemon.token], { env: process.env, timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
    const seen = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(seen).toMatchObject({ tools: ["python", "skill", "reload"], first: ["42\n"], second: ["43\n"], images: ["image/png"], resource: expect.stringContaining("# Demo") });
    expect(seen.prompt).toMatch(/^\/demo from python\n\nFollow the instructions of the skill "demo" \(.*SKILL\.md\) for: from python\.\n\n# Demo/);
  }, 150_000);
});

/** Sends `request` as raw bytes to 127.0.0.1:`port` and returns what came back. */
async function rawHttp(port: string, request: string): Promise<string> {
  const { connect: dial } = await import("node:net");
  return new Promise((resolve, reject) => {
    const socket = dial(Number(port), "127.0.0.1", () => socket.write(request));
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.setTimeout(10_000, () => (socket.destroy(), reject(new Error("no answer"))));
  });
}
