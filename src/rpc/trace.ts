/**
 * When the runtime received each call and sent its answer, published on a diagnostics channel for
 * whoever subscribes (the bench's RPC timeline). With no subscriber a call pays one flag check.
 */
import diagnostics from "node:diagnostics_channel";
import { wallClockMs } from "../platform/index.js";

/** Name of the channel; a subscriber gets an RpcTraceEvent per step. */
export const RPC_TRACE_CHANNEL = "albedo:rpc";

/** One step of one call: `received` as the frames came off the socket, `replied` as its answer went to the socket. */
export interface RpcTraceEvent {
  readonly step: "received" | "replied";
  /** Epoch milliseconds with sub-millisecond precision (the clock the kernel's time.time() reads). */
  readonly at: number;
}

const channel = diagnostics.channel(RPC_TRACE_CHANNEL);

/** Publishes `step` with the current time when someone listens. */
export function traceStep(step: RpcTraceEvent["step"]): void {
  if (channel.hasSubscribers) channel.publish({ step, at: wallClockMs() } satisfies RpcTraceEvent);
}
