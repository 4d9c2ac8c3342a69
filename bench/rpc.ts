/**
 * `await skills.read` beside the transport floor (a bare pyzmq DEALER echo to a ZeroMQ ROUTER in
 * this process), the same echo awaited on the kernel's loop, and the same read's page from a route
 * that does no work, in alternating batches in one cell; the context switches each kind of call
 * costs each thread of both processes; then the per-stage timeline of one read, from the kernel's
 * time.time() stamps and the runtime's trace channel (RPC_TRACE_CHANNEL).
 */
import diagnostics from "node:diagnostics_channel";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { RPC_TRACE_CHANNEL, RouteTable, RpcServer, type RpcTraceEvent } from "../src/rpc/index.js";
import type { Session } from "../src/session/index.js";
import { installDir } from "../src/platform/index.js";
import { switchesPerCall, threadSwitches, type Switches } from "./cpu.js";
import { goal } from "./goals.js";
import { withEcho } from "./echo.js";
import { processTree } from "./pss.js";
import { cellJson, cellText } from "./session.js";
import { median, round } from "./stats.js";

/** Alternating batches of reads and echoes, and calls per batch: 1,000 timed of each. */
const RPC_ROUNDS = 20;
const RPC_BATCH = 50;
/** Batches of each run and dropped first. */
const RPC_WARMUP_ROUNDS = 2;
/** Reads split into stages. */
const TIMELINE_CALLS = 500;
/** Calls of each kind made in a row while the threads' context switches are counted. */
const SWITCH_CALLS = 2_000;
/** The kinds of call, as the kernel's Calls names them. */
const CALL_KINDS = ["read", "floor", "awaited_echo", "page_route"] as const;
/** The page route's method name. */
const PAGE_METHOD = "bench.page";
/** The goal: `await skills.read` within 1.5x of the echo floor. */
const RPC_GOAL = 1.5;

const BENCH_PY = () => join(installDir(), "bench", "python", "rpc_bench.py");

interface KernelMarks { call: number; encoded?: number; sent?: number; read?: number; resolved?: number; resumed: number }

/** Stage medians (µs) of TIMELINE_CALLS reads, each call's kernel stamps beside the runtime's two. */
async function readTimeline(session: Session): Promise<Record<string, number>> {
  const runtime: RpcTraceEvent[] = [];
  const listen = (event: unknown) => runtime.push(event as RpcTraceEvent);
  diagnostics.subscribe(RPC_TRACE_CHANNEL, listen);
  let calls: KernelMarks[];
  try {
    calls = await cellJson<KernelMarks[]>(session, `exec(open(${JSON.stringify(BENCH_PY())}).read())\nimport json\nprint(json.dumps(await timeline(skills, ${TIMELINE_CALLS})))`);
  } finally {
    diagnostics.unsubscribe(RPC_TRACE_CHANNEL, listen);
  }
  const received = runtime.filter((e) => e.step === "received").map((e) => e.at / 1000);
  const replied = runtime.filter((e) => e.step === "replied").map((e) => e.at / 1000);
  // The cell's calls are sequential, so the n-th call the runtime saw is the cell's n-th (the first reads of the cell come before).
  const offset = received.length - calls.length;
  const stages: Record<string, number[]> = {};
  const add = (name: string, from: number | undefined, to: number | undefined) => {
    if (from !== undefined && to !== undefined) (stages[name] ??= []).push((to - from) * 1e6);
  };
  calls.forEach((c, i) => {
    const [rx, tx] = [received[offset + i], replied[offset + i]];
    add("kernel_encode", c.call, c.encoded);
    add("kernel_send", c.encoded, c.sent);
    add("to_runtime", c.sent, rx);
    add("runtime", rx, tx);
    add("to_kernel", tx, c.read);
    add("kernel_dispatch", c.read, c.resolved);
    add("kernel_resume", c.resolved, c.resumed);
    add("total", c.call, c.resumed);
  });
  return Object.fromEntries(Object.entries(stages).map(([name, values]) => [name, Math.round(median(values))]));
}

/**
 * Runs `body` with a second RPC server beside the session's, in a directory of its run directory
 * (which the kernel's sandbox shows it), whose one route answers with `page` at once: the channel's
 * own cost for a call, with nothing for a handler to check or read.
 */
async function withPageRoute<T>(session: Session, page: unknown, body: (server: RpcServer) => Promise<T>): Promise<T> {
  const runDir = join(session.runDir, "bench");
  await mkdir(runDir, { mode: 0o700 });
  const server = new RpcServer({ runDir, routes: RouteTable.of({ [PAGE_METHOD]: () => page }) });
  try {
    await server.start();
    return await body(server);
  } finally {
    await server.close();
    await rm(runDir, { recursive: true, force: true });
  }
}

/**
 * Context switches per call of each kind, by thread role in the runtime (this process) and in the
 * kernel's process tree: SWITCH_CALLS calls in one cell, counters read before and after it (the
 * cell's own execute adds a few switches, a few thousandths per call).
 */
async function switchesByKind(session: Session): Promise<Record<string, unknown>> {
  const kernelPid = session.status().pid;
  if (kernelPid === undefined) return { skipped: "the kernel's pid is unknown" };
  const read = () => ({ runtime: threadSwitches([process.pid]), kernel: threadSwitches(processTree(kernelPid)) });
  const prefixed = (side: string, roles: Record<string, Switches>) => Object.fromEntries(Object.entries(roles).map(([role, s]) => [`${side} ${role}`, s]));
  const out: Record<string, unknown> = {};
  for (const kind of CALL_KINDS) {
    const before = read();
    await cellText(session, `await calls.run(${JSON.stringify(kind)}, ${SWITCH_CALLS})`);
    const after = read();
    out[kind] = {
      ...prefixed("runtime", switchesPerCall(before.runtime, after.runtime, SWITCH_CALLS)),
      ...prefixed("kernel", switchesPerCall(before.kernel, after.kernel, SWITCH_CALLS)),
    };
  }
  return { ...out, calls: SWITCH_CALLS, counts: "per call: voluntary (the thread slept and woke) and involuntary (it was preempted)" };
}

/** Medians (ms), the ratio to the floor, the context switches per call, and the stage timeline (µs). */
export async function benchRpc(session: Session): Promise<Record<string, unknown>> {
  const endpoint = `ipc://${join(session.runDir, "echo")}`;
  const setup = `exec(open(${JSON.stringify(BENCH_PY())}).read())\nimport json`;
  const page = await cellJson<unknown>(session, `${setup}\nprint(json.dumps(await skills.read(**READ)))`);
  const { measured, switches } = await withPageRoute(session, page, (server) => {
    const { endpoint: pageEndpoint, token, deadlineMs, maxMessageBytes } = server.kernelAccess();
    // The kernel's loop binds the socket the server dials, as a session kernel's main loop does for reads.
    server.dialKernel();
    const route = JSON.stringify([pageEndpoint, token, deadlineMs, maxMessageBytes, server.kernelEndpoint, PAGE_METHOD]);
    return withEcho(endpoint, async () => {
      await cellText(session, `${setup}\ncalls = Calls(skills, ${JSON.stringify(endpoint)}, json.loads(${JSON.stringify(route)}))`);
      try {
        const measured = await cellJson<Record<(typeof CALL_KINDS)[number], number[]>>(
          session,
          `print(json.dumps(await versus_floor(calls, ${RPC_ROUNDS}, ${RPC_BATCH}, ${RPC_WARMUP_ROUNDS})))`,
        );
        return { measured, switches: await switchesByKind(session) };
      } finally {
        await cellText(session, "await calls.close()");
      }
    });
  });
  return {
    albedo_median_ms: round(median(measured.read)),
    pyzmq_floor_median_ms: round(median(measured.floor)),
    ...goal(median(measured.read), median(measured.floor), RPC_GOAL),
    // No goal: how much of the gap to the floor is awaiting on an event loop at all, and how much albedo's.
    awaited_echo_median_ms: round(median(measured.awaited_echo)),
    ratio_to_awaited_echo: round(median(measured.read) / median(measured.awaited_echo)),
    // No goal: the same page from a route that does no work, so the rest of a read's time is its handler's.
    page_route_median_ms: round(median(measured.page_route)),
    page_route_ratio_to_floor: round(median(measured.page_route) / median(measured.floor)),
    rounds: measured.read.length,
    // No goal: whether a read wakes any thread more often than the echo does, or only keeps it busier.
    switches_per_call: switches,
    timeline_us: {
      ...(await readTimeline(session)),
      calls: TIMELINE_CALLS,
      stages: "kernel: call -> encoded -> sent | runtime: received -> replied | kernel: read -> resolved -> resumed",
    },
  };
}
