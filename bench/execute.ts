/**
 * A trivial execute's round trip, albedo beside jupyter_client (with its defaults) on the same
 * machine: batches alternate between the two so both see the same load. Then a timeline of one
 * execute on each, from the client's clock and the kernel's header dates: client send -> kernel
 * busy -> execute_reply -> idle -> client has idle -> client settled.
 */
import { performance } from "node:perf_hooks";
import type { ExecuteTimes } from "../src/kernel/index.js";
import type { Session } from "../src/session/index.js";
import type { JupyterClientBaseline } from "./baseline.js";
import { goal } from "./goals.js";
import { median, round } from "./stats.js";

/** Executes run and discarded before timing, on both sides: the first cells of a fresh kernel are slower. */
const EXECUTE_WARMUP = 20;
/** Alternating batches, and executes per batch: 200 timed on each side. */
const EXECUTE_ROUNDS = 10;
const EXECUTES_PER_ROUND = 20;
/** Executes split into stages, per side. */
const TIMELINE_RUNS = 100;
/** The goal: albedo's execute round trip at most half of jupyter_client's. */
const EXECUTE_GOAL = 0.5;

type Stages = Record<(typeof STAGES)[number], number[]>;
const STAGES = ["send_to_busy", "busy_to_reply", "reply_to_idle", "idle_to_client", "client_settle", "total"] as const;

async function albedoExecutes(session: Session, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const began = performance.now();
    await session.kernel.execute("1").done;
    times.push(performance.now() - began);
  }
  return times;
}

/** The stages of one execute from its times (ms); undefined when a step is missing. */
function stagesOf(t: ExecuteTimes): Record<keyof Stages, number> | undefined {
  const { sent, kernelBusy, kernelReply, kernelIdle, idleReceived, settled } = t;
  if (sent === undefined || kernelBusy === undefined || kernelReply === undefined || kernelIdle === undefined || idleReceived === undefined || settled === undefined) return undefined;
  return {
    send_to_busy: kernelBusy - sent,
    busy_to_reply: kernelReply - kernelBusy,
    reply_to_idle: kernelIdle - kernelReply,
    idle_to_client: idleReceived - kernelIdle,
    client_settle: settled - idleReceived,
    total: settled - sent,
  };
}

async function albedoTimeline(session: Session): Promise<Stages> {
  const stages = Object.fromEntries(STAGES.map((name) => [name, [] as number[]])) as Stages;
  for (let i = 0; i < TIMELINE_RUNS; i++) {
    const future = session.kernel.execute("1");
    await future.done;
    const split = stagesOf(future.timeline.times());
    if (split) for (const name of STAGES) stages[name].push(split[name]);
  }
  return stages;
}

const medians = (stages: Stages) => Object.fromEntries(STAGES.map((name) => [name, round(median(stages[name]))]));

/** Runs both sides on kernels that are already up (`baseline` booted); medians in ms. */
export async function benchExecute(session: Session, baseline: JupyterClientBaseline): Promise<Record<string, unknown>> {
  await albedoExecutes(session, EXECUTE_WARMUP);
  await baseline.ask(`execute ${EXECUTE_WARMUP}`);
  const albedo: number[] = [];
  const jupyterClient: number[] = [];
  for (let round = 0; round < EXECUTE_ROUNDS; round++) {
    albedo.push(...(await albedoExecutes(session, EXECUTES_PER_ROUND)));
    jupyterClient.push(...(await baseline.ask<{ ms: number[] }>(`execute ${EXECUTES_PER_ROUND}`)).ms);
  }
  const timeline = { albedo: medians(await albedoTimeline(session)), jupyter_client: medians((await baseline.ask<{ stages: Stages }>(`timeline ${TIMELINE_RUNS}`)).stages) };
  return {
    albedo_median_ms: round(median(albedo)),
    jupyter_client_median_ms: round(median(jupyterClient)),
    ...goal(median(albedo), median(jupyterClient), EXECUTE_GOAL),
    runs: albedo.length,
    timeline_ms: { ...timeline, runs: TIMELINE_RUNS, stages: "client send -> kernel busy -> execute_reply -> idle -> client has idle -> settled (reply and idle in)" },
  };
}
