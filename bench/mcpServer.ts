/**
 * albedo as an MCP server, against the same work through the daemon's HTTP API:
 * - python_round_trip: a trivial `python` call from the SDK's Client to `albedo mcp serve`
 *   (stdio) and to the daemon's `/mcp` (Streamable HTTP), against `POST /sessions/{id}/execute`
 *   of the same code on a daemon, in alternating batches; python_round_trip_modern is the same
 *   call from the SDK's v2 Client pinned to 2026-07-28 on the daemon's `/mcp`, on the session
 *   handle its first call returned;
 * - first_result: from spawning `albedo mcp serve` (stdio), or from connecting to the daemon's
 *   `/mcp` (HTTP), to the first `python` result, against a cold `POST /sessions` on a running
 *   daemon (no warm spares) plus one execute; with what starting a process costs by itself
 *   (`node -e ""`, `albedo --version`), the part the daemon's baseline never pays.
 */
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { join } from "node:path";
import { installDir } from "../src/platform/index.js";
import { call, envFor, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../test/daemon/support/daemon.js";
import { goal } from "./goals.js";
import { median, round } from "./stats.js";

/** Batches of each kind, alternating; the first of each is a warm-up. */
const BATCHES = 7;
const CALLS_PER_BATCH = 40;
/** Cold starts of each kind, alternating. */
const STARTS = 4;
/** Goals of the issue: a round trip within 1.2× of the daemon's execute, the first result within 1.1× of a cold open plus one execute. */
const ROUND_TRIP_BOUND = 1.2;
const FIRST_RESULT_BOUND = 1.1;
const CODE = "1";

async function connect(dirs: Dirs): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(installDir(), "bin", "albedo"), "mcp", "serve", "--workspace", dirs.workspace], env: envFor(dirs) as Record<string, string>, stderr: "ignore" }));
  return client;
}

/** An SDK client on the daemon's /mcp for `dirs.workspace`. */
async function connectHttp(daemon: DaemonProcess, dirs: Dirs): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  const url = new URL(`${daemon.url}/mcp?workspace=${encodeURIComponent(dirs.workspace)}`);
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${daemon.token}` } } }));
  return client;
}

/** A v2 client pinned to 2026-07-28 on the daemon's /mcp, and the session handle its first python call returned. */
async function connectModern(daemon: DaemonProcess, dirs: Dirs): Promise<{ client: ModernClient; handle: string }> {
  const client = new ModernClient({ name: "bench", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  const url = new URL(`${daemon.url}/mcp?workspace=${encodeURIComponent(dirs.workspace)}`);
  await client.connect(new ModernHttp(url, { requestInit: { headers: { authorization: `Bearer ${daemon.token}` } } }));
  const first = await client.callTool({ name: "python", arguments: { code: CODE } });
  const handle = (first.structuredContent as { session?: unknown } | undefined)?.session;
  if (typeof handle !== "string") throw new Error("the first 2026-07-28 python call returned no session handle");
  return { client, handle };
}

async function modernBatch({ client, handle }: { client: ModernClient; handle: string }): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < CALLS_PER_BATCH; i++) await client.callTool({ name: "python", arguments: { code: CODE, session: handle } });
  return (performance.now() - began) / CALLS_PER_BATCH;
}

/** Milliseconds `argv` takes to run to its end, the median of STARTS runs. */
function processMs(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  const runs: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const began = performance.now();
    spawnSync(argv[0]!, argv.slice(1), { env, stdio: "ignore" });
    runs.push(performance.now() - began);
  }
  return median(runs);
}

async function mcpBatch(client: Client): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < CALLS_PER_BATCH; i++) await client.callTool({ name: "python", arguments: { code: CODE } });
  return (performance.now() - began) / CALLS_PER_BATCH;
}

async function daemonBatch(daemon: DaemonProcess, id: string): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < CALLS_PER_BATCH; i++) await call(daemon, "POST", `/sessions/${id}/execute`, { code: CODE });
  return (performance.now() - began) / CALLS_PER_BATCH;
}

async function mcpFirstResult(open: () => Promise<Client>, end: (client: Client) => Promise<void>): Promise<number> {
  const began = performance.now();
  const client = await open();
  await client.callTool({ name: "python", arguments: { code: CODE } });
  const ms = performance.now() - began;
  await end(client);
  return ms;
}

/** Ends an HTTP client's MCP session (DELETE), so its kernel does not wait for the idle time. */
async function endHttp(client: Client): Promise<void> {
  await (client.transport as StreamableHTTPClientTransport).terminateSession();
  await client.close();
}

async function daemonFirstResult(daemon: DaemonProcess, dirs: Dirs): Promise<number> {
  const began = performance.now();
  const opened = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
  const id = (opened.body as { id: string }).id;
  await call(daemon, "POST", `/sessions/${id}/execute`, { code: CODE });
  const ms = performance.now() - began;
  await call(daemon, "DELETE", `/sessions/${id}`);
  return ms;
}

export async function benchMcpServer(): Promise<Record<string, unknown>> {
  const dirs = await makeDirs();
  let daemon: DaemonProcess | undefined;
  let client: Client | undefined;
  let httpClient: Client | undefined;
  let modern: { client: ModernClient; handle: string } | undefined;
  try {
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    const running = daemon;
    const firstMcp: number[] = [];
    const firstHttp: number[] = [];
    const firstDaemon: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      firstMcp.push(await mcpFirstResult(() => connect(dirs), (c) => c.close()));
      firstHttp.push(await mcpFirstResult(() => connectHttp(running, dirs), endHttp));
      firstDaemon.push(await daemonFirstResult(daemon, dirs));
    }
    client = await connect(dirs);
    httpClient = await connectHttp(daemon, dirs);
    modern = await connectModern(daemon, dirs);
    const id = ((await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body as { id: string }).id;
    const viaMcp: number[] = [];
    const viaHttp: number[] = [];
    const viaModern: number[] = [];
    const viaDaemon: number[] = [];
    for (let i = 0; i < BATCHES; i++) {
      const [m, h, n, d] = [await mcpBatch(client), await mcpBatch(httpClient), await modernBatch(modern), await daemonBatch(daemon, id)];
      if (i === 0) continue;
      viaMcp.push(m);
      viaHttp.push(h);
      viaModern.push(n);
      viaDaemon.push(d);
    }
    const [roundTrip, roundTripHttp, roundTripModern, execute] = [median(viaMcp), median(viaHttp), median(viaModern), median(viaDaemon)];
    const [first, firstOverHttp, cold] = [median(firstMcp), median(firstHttp), median(firstDaemon)];
    const env = envFor(dirs);
    return {
      python_round_trip: { mcp_ms: round(roundTrip), daemon_execute_ms: round(execute), goal: goal(roundTrip, execute, ROUND_TRIP_BOUND) },
      python_round_trip_http: { mcp_http_ms: round(roundTripHttp), daemon_execute_ms: round(execute), goal: goal(roundTripHttp, execute, ROUND_TRIP_BOUND) },
      python_round_trip_modern: { mcp_2026_07_28_ms: round(roundTripModern), daemon_execute_ms: round(execute), goal: goal(roundTripModern, execute, ROUND_TRIP_BOUND) },
      first_result: {
        mcp_serve_ms: round(first),
        daemon_open_and_execute_ms: round(cold),
        goal: goal(first, cold, FIRST_RESULT_BOUND),
        node_start_ms: round(processMs([process.execPath, "-e", ""], env)),
        albedo_version_ms: round(processMs([process.execPath, join(installDir(), "bin", "albedo"), "--version"], env)),
      },
      first_result_http: { mcp_http_ms: round(firstOverHttp), daemon_open_and_execute_ms: round(cold), goal: goal(firstOverHttp, cold, FIRST_RESULT_BOUND) },
    };
  } finally {
    await modern?.client.close();
    await httpClient?.close();
    await client?.close();
    if (daemon) await killDaemon(daemon, "SIGTERM");
    await dirs.cleanup();
  }
}
