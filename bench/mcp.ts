/**
 * MCP calls from a kernel against the same calls made by the SDK's Client in this process, to a
 * second copy of the same Node reference server (mcp-server-everything, stdio):
 * - call_overhead: one awaited `mcp.everything.echo(...)` after another, timed inside the cell,
 *   against the Client awaiting the same echo, in alternating batches (median per call);
 * - gathered: 200 calls gathered in one cell against the Client sending the same 200 at once;
 * - session_open: opening a session whose settings configure two stdio servers against one that
 *   configures none (servers start beside the kernel, not after it);
 * - eras: call_overhead and gathered again in each protocol era, against a server written with the
 *   official Python SDK that speaks only that era, and the TypeScript SDK's own client of that era
 *   (the v2 client pinned to 2026-07-28; the v1 client for the legacy handshake).
 */
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { goal } from "./goals.js";
import { benchDirs, cellJson, openSession, type BenchDirs } from "./session.js";
import { median, round } from "./stats.js";
import type { Session } from "../src/session/index.js";
import { HAVE_TEST_VENV, NO_TEST_VENV, ROOT, TEST_VENV_PYTHON } from "../test/support/testVenv.js";

const EVERYTHING = resolve("node_modules/.bin/mcp-server-everything");
/** The Python SDK server of the era tests: `era_server.py modern|legacy` speaks that era only. */
const ERA_SERVER = join(ROOT, "test", "mcp", "servers", "era_server.py");
/** The current protocol revision, which the modern client pins. */
const MODERN_PROTOCOL = "2026-07-28";
/** A cold Python SDK import can take many seconds on a busy machine. */
const ERA_STARTUP_MS = 120_000;
/** Batches of each kind, alternating; the first of each is a warm-up. */
const BATCHES = 7;
const CALLS_PER_BATCH = 50;
const GATHERED_CALLS = 200;
const GATHERED_BATCHES = 4;
const OPENS = 4;
/** Goals of the issue: a call from a cell within 1.3× of the SDK's own, gathered within 1.5×, session open within 1.2×. */
const CALL_OVERHEAD_BOUND = 1.3;
const GATHERED_BOUND = 1.5;
const OPEN_BOUND = 1.2;

async function configure(dirs: BenchDirs, servers: Record<string, unknown>): Promise<void> {
  await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ mcp: { servers } }));
}

/** One call as a cell awaits it, and the same call as the SDK's client makes it. */
interface Probe {
  readonly python: string;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}
const ECHO: Probe = { python: "mcp.everything.echo(message='bench')", name: "echo", arguments: { message: "bench" } };
const SHOUT: Probe = { python: "mcp.era.shout(text='bench')", name: "shout", arguments: { text: "bench" } };

/** What the benchmark needs of either SDK's client. */
interface CallingClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

/** Per-call ms of `calls` sequential calls timed inside the cell. */
async function kernelSequential(session: Session, calls: number, probe: Probe): Promise<number> {
  const { ms } = await cellJson<{ ms: number }>(session, [
    "import json, time",
    "_t = time.perf_counter()",
    `for _ in range(${calls}):`,
    `    await ${probe.python}`,
    `print(json.dumps({'ms': (time.perf_counter() - _t) * 1000 / ${calls}}))`,
  ].join("\n"));
  return ms;
}

async function kernelGathered(session: Session, calls: number, probe: Probe): Promise<number> {
  const { ms } = await cellJson<{ ms: number }>(session, [
    "import asyncio, json, time",
    "_t = time.perf_counter()",
    `await asyncio.gather(*[${probe.python} for _ in range(${calls})])`,
    `print(json.dumps({'ms': (time.perf_counter() - _t) * 1000 / ${calls}}))`,
  ].join("\n"));
  return ms;
}

async function clientSequential(client: CallingClient, calls: number, probe: Probe): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < calls; i++) await client.callTool({ name: probe.name, arguments: probe.arguments });
  return (performance.now() - began) / calls;
}

async function clientGathered(client: CallingClient, calls: number, probe: Probe): Promise<number> {
  const began = performance.now();
  await Promise.all(Array.from({ length: calls }, () => client.callTool({ name: probe.name, arguments: probe.arguments })));
  return (performance.now() - began) / calls;
}

/** call_overhead and gathered for one session and one client calling the same server's probe. */
async function callMeasures(session: Session, client: CallingClient, probe: Probe): Promise<Record<string, unknown>> {
  const sequential = await alternate(BATCHES, () => kernelSequential(session, CALLS_PER_BATCH, probe), () => clientSequential(client, CALLS_PER_BATCH, probe));
  const gathered = await alternate(GATHERED_BATCHES, () => kernelGathered(session, GATHERED_CALLS, probe), () => clientGathered(client, GATHERED_CALLS, probe));
  return {
    call_overhead: { cell_ms: round(sequential.ours), sdk_client_ms: round(sequential.theirs), ...goal(sequential.ours, sequential.theirs, CALL_OVERHEAD_BOUND) },
    gathered: { calls: GATHERED_CALLS, cell_ms_per_call: round(gathered.ours), sdk_client_ms_per_call: round(gathered.theirs), ...goal(gathered.ours, gathered.theirs, GATHERED_BOUND) },
  };
}

/** The SDK's own client of `era`, connected to the era server speaking only that era. */
async function eraClient(era: "modern" | "legacy"): Promise<CallingClient & { close(): Promise<void> }> {
  const server = { command: TEST_VENV_PYTHON, args: [ERA_SERVER, era], stderr: "ignore" as const };
  if (era === "legacy") {
    const client = new Client({ name: "albedo-bench", version: "1" });
    await client.connect(new StdioClientTransport(server), { timeout: ERA_STARTUP_MS });
    return client;
  }
  const client = new ModernClient({ name: "albedo-bench", version: "1" }, { versionNegotiation: { mode: { pin: MODERN_PROTOCOL } } });
  await client.connect(new ModernStdio(server), { timeout: ERA_STARTUP_MS });
  return client;
}

/** Both eras against the SDK's own client of each; the session's client reports the era it found. */
async function eraMeasures(): Promise<Record<string, unknown>> {
  if (!HAVE_TEST_VENV) return { skipped: NO_TEST_VENV };
  const measures: Record<string, unknown> = {};
  for (const era of ["modern", "legacy"] as const) {
    const dirs = await benchDirs("alb-bench-mcp-era-");
    await configure(dirs, { era: { command: TEST_VENV_PYTHON, args: [ERA_SERVER, era], startup_timeout_ms: ERA_STARTUP_MS } });
    const session = await openSession(dirs);
    const client = await eraClient(era);
    try {
      const [server] = await cellJson<{ protocol: string }[]>(session, "import json; print(json.dumps([s for s in await mcp.servers() if s['name'] == 'era']))");
      measures[era] = { protocol: server?.protocol ?? null, ...(await callMeasures(session, client, SHOUT)) };
    } finally {
      await client.close();
      await session.close();
      await dirs.remove();
    }
  }
  return measures;
}

/** Alternating batches of `ours` and `theirs`, the first of each dropped; the medians. */
async function alternate(batches: number, ours: () => Promise<number>, theirs: () => Promise<number>): Promise<{ ours: number; theirs: number }> {
  const a: number[] = [];
  const b: number[] = [];
  for (let batch = 0; batch < batches; batch++) {
    const x = await ours();
    const y = await theirs();
    if (batch > 0) {
      a.push(x);
      b.push(y);
    }
  }
  return { ours: median(a), theirs: median(b) };
}

/** Median ms to open (and close) a session on dirs configured by `prepare`, alternating with a bare one. */
async function sessionOpens(): Promise<{ withServers: number; without: number }> {
  const timeOpen = async (servers: Record<string, unknown> | undefined): Promise<number> => {
    const dirs = await benchDirs("alb-bench-mcp-");
    try {
      if (servers) await configure(dirs, servers);
      const began = performance.now();
      const session = await openSession(dirs);
      // Open means the kernel answers and, with servers, their tools are in the kernel's namespace.
      await cellJson(session, servers ? "import json; print(json.dumps(len(await mcp.tools())))" : "print(1)");
      const ms = performance.now() - began;
      await session.close();
      return ms;
    } finally {
      await dirs.remove();
    }
  };
  const two = { one: { command: EVERYTHING }, two: { command: EVERYTHING } };
  const result = await alternate(OPENS + 1, () => timeOpen(two), () => timeOpen(undefined));
  return { withServers: result.ours, without: result.theirs };
}

/** Runs the benchmark. */
export async function benchMcp(): Promise<Record<string, unknown>> {
  const dirs = await benchDirs("alb-bench-mcp-");
  await configure(dirs, { everything: { command: EVERYTHING } });
  const session = await openSession(dirs);
  const client = new Client({ name: "albedo-bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: EVERYTHING, stderr: "ignore" }));
  try {
    const calls = await callMeasures(session, client, ECHO);
    const opens = await sessionOpens();
    return {
      ...calls,
      session_open: { two_stdio_servers_ms: round(opens.withServers), no_servers_ms: round(opens.without), ...goal(opens.withServers, opens.without, OPEN_BOUND) },
      eras: await eraMeasures(),
    };
  } finally {
    await client.close();
    await session.close();
    await dirs.remove();
  }
}
