/**
 * MCP calls from a kernel against the same calls made by the SDK's Client in this process, to a
 * second copy of the same Node reference server (mcp-server-everything, stdio):
 * - call_overhead: one awaited `mcp.everything.echo(...)` after another, timed inside the cell,
 *   against the Client awaiting the same echo, in alternating batches (median per call);
 * - gathered: 200 calls gathered in one cell against the Client sending the same 200 at once;
 * - session_open: opening a session whose settings configure two stdio servers against one that
 *   configures none (servers start beside the kernel, not after it).
 */
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { goal } from "./goals.js";
import { benchDirs, cellJson, openSession, type BenchDirs } from "./session.js";
import { median, round } from "./stats.js";
import type { Session } from "../src/session/index.js";

const EVERYTHING = resolve("node_modules/.bin/mcp-server-everything");
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

/** Per-call ms of `calls` sequential echoes timed inside the cell. */
async function kernelSequential(session: Session, calls: number): Promise<number> {
  const { ms } = await cellJson<{ ms: number }>(session, [
    "import json, time",
    "_t = time.perf_counter()",
    `for _ in range(${calls}):`,
    "    await mcp.everything.echo(message='bench')",
    `print(json.dumps({'ms': (time.perf_counter() - _t) * 1000 / ${calls}}))`,
  ].join("\n"));
  return ms;
}

async function kernelGathered(session: Session, calls: number): Promise<number> {
  const { ms } = await cellJson<{ ms: number }>(session, [
    "import asyncio, json, time",
    "_t = time.perf_counter()",
    `await asyncio.gather(*[mcp.everything.echo(message='bench') for _ in range(${calls})])`,
    `print(json.dumps({'ms': (time.perf_counter() - _t) * 1000 / ${calls}}))`,
  ].join("\n"));
  return ms;
}

async function clientSequential(client: Client, calls: number): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < calls; i++) await client.callTool({ name: "echo", arguments: { message: "bench" } });
  return (performance.now() - began) / calls;
}

async function clientGathered(client: Client, calls: number): Promise<number> {
  const began = performance.now();
  await Promise.all(Array.from({ length: calls }, () => client.callTool({ name: "echo", arguments: { message: "bench" } })));
  return (performance.now() - began) / calls;
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
    const sequential = await alternate(BATCHES, () => kernelSequential(session, CALLS_PER_BATCH), () => clientSequential(client, CALLS_PER_BATCH));
    const gathered = await alternate(GATHERED_BATCHES, () => kernelGathered(session, GATHERED_CALLS), () => clientGathered(client, GATHERED_CALLS));
    const opens = await sessionOpens();
    return {
      call_overhead: { cell_ms: round(sequential.ours), sdk_client_ms: round(sequential.theirs), ...goal(sequential.ours, sequential.theirs, CALL_OVERHEAD_BOUND) },
      gathered: { calls: GATHERED_CALLS, cell_ms_per_call: round(gathered.ours), sdk_client_ms_per_call: round(gathered.theirs), ...goal(gathered.ours, gathered.theirs, GATHERED_BOUND) },
      session_open: { two_stdio_servers_ms: round(opens.withServers), no_servers_ms: round(opens.without), ...goal(opens.withServers, opens.without, OPEN_BOUND) },
    };
  } finally {
    await client.close();
    await session.close();
    await dirs.remove();
  }
}
