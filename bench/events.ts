/**
 * Admission under load: EVENTS messages posted at once (POST /sessions/{id}/events, spread over the
 * sessions) while every session runs its concurrent reads, each message a turn with a `python`
 * step (the stub model of EVENTS_SCRIPT). Timed per event: from the POST until its 202, the answer
 * that the input is stored; then every turn must end completed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { newOperationId } from "../src/operations/index.js";
import { call, type DaemonProcess } from "../test/daemon/support/daemon.js";
import { median, percentile, round } from "./stats.js";

/** Messages posted at once, over all sessions (the probe that found the figure sent 200). */
export const EVENTS = 200;
/** How long the bench waits for every turn to end, an upper bound far above the run. */
const EVENTS_DONE_TIMEOUT_MS = 300_000;
const EVENTS_POLL_MS = 200;

/** Each turn: one python step, then prose. */
const EVENTS_SCRIPT = {
  replies: [
    { tool_calls: [{ name: "python", arguments: { code: "print(1)" } }] },
    { expect_tool: "python", text: "It printed 1." },
  ],
};

/** The global settings that give turns the stub model; write them before the daemon starts. */
export function writeEventsModel(root: string, stateDir: string): void {
  const script = join(root, "events-stub.json");
  writeFileSync(script, JSON.stringify(EVENTS_SCRIPT));
  writeFileSync(join(stateDir, "settings.json"), JSON.stringify({ model: { provider: "stub", mode: "code", name: "stub", script } }), { mode: 0o600 });
}

interface Posted { id: string; ms: number; status: number }

async function post(daemon: DaemonProcess, sessionId: string, n: number): Promise<Posted> {
  const id = newOperationId();
  const began = performance.now();
  const answer = await call(daemon, "POST", `/sessions/${sessionId}/events`, { operation_id: id, type: "message", text: `event ${n}` });
  return { id, ms: performance.now() - began, status: answer.status };
}

/** Resolves once every operation's turn ended; returns how many completed. */
async function completed(daemon: DaemonProcess, ids: string[]): Promise<number> {
  const deadline = Date.now() + EVENTS_DONE_TIMEOUT_MS;
  let open = ids;
  let done = 0;
  while (open.length > 0 && Date.now() < deadline) {
    const states = await Promise.all(open.map(async (id) => ({ id, body: (await call(daemon, "GET", `/operations/${id}`)).body })));
    open = states.filter(({ body }) => body?.turn?.outcome == null).map(({ id }) => id);
    done += states.filter(({ body }) => body?.turn?.outcome?.result === "completed").length;
    if (open.length > 0) await new Promise((resolve) => setTimeout(resolve, EVENTS_POLL_MS));
  }
  return done;
}

/** Posts EVENTS messages at once while `load` runs; admission times (p50, p99, max) and how many were admitted and completed. */
export async function eventsDuring(daemon: DaemonProcess, sessionIds: string[], load: () => Promise<unknown>): Promise<Record<string, unknown>> {
  const running = load();
  const posted = await Promise.all(Array.from({ length: EVENTS }, (_, n) => post(daemon, sessionIds[n % sessionIds.length]!, n)));
  await running;
  const admitted = posted.filter((p) => p.status === 202);
  const ms = posted.map((p) => p.ms);
  return {
    events: EVENTS,
    admitted: admitted.length,
    completed: await completed(daemon, admitted.map((p) => p.id)),
    admit_p50_ms: round(median(ms)),
    admit_p99_ms: round(percentile(ms, 99)),
    admit_max_ms: round(Math.max(...ms)),
  };
}
