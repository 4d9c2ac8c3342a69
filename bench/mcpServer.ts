/**
 * albedo as an MCP server (stdio), against the same work through the daemon's HTTP API:
 * - python_round_trip: a trivial `python` call from the SDK's Client to `albedo mcp serve`,
 *   against `POST /sessions/{id}/execute` of the same code on a daemon, in alternating batches;
 * - first_result: from spawning `albedo mcp serve` to the first `python` result, against a cold
 *   `POST /sessions` on a running daemon (no warm spares) plus one execute.
 */
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
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

async function mcpFirstResult(dirs: Dirs): Promise<number> {
  const began = performance.now();
  const client = await connect(dirs);
  await client.callTool({ name: "python", arguments: { code: CODE } });
  const ms = performance.now() - began;
  await client.close();
  return ms;
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
  try {
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    const firstMcp: number[] = [];
    const firstDaemon: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      firstMcp.push(await mcpFirstResult(dirs));
      firstDaemon.push(await daemonFirstResult(daemon, dirs));
    }
    client = await connect(dirs);
    const id = ((await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body as { id: string }).id;
    const viaMcp: number[] = [];
    const viaDaemon: number[] = [];
    for (let i = 0; i < BATCHES; i++) {
      const [m, d] = [await mcpBatch(client), await daemonBatch(daemon, id)];
      if (i === 0) continue;
      viaMcp.push(m);
      viaDaemon.push(d);
    }
    const roundTrip = median(viaMcp);
    const execute = median(viaDaemon);
    const first = median(firstMcp);
    const cold = median(firstDaemon);
    return {
      python_round_trip: { mcp_ms: round(roundTrip), daemon_execute_ms: round(execute), goal: goal(roundTrip, execute, ROUND_TRIP_BOUND) },
      first_result: { mcp_serve_ms: round(first), daemon_open_and_execute_ms: round(cold), goal: goal(first, cold, FIRST_RESULT_BOUND) },
    };
  } finally {
    await client?.close();
    if (daemon) await killDaemon(daemon, "SIGTERM");
    await dirs.cleanup();
  }
}
