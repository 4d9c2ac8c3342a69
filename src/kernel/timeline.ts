/**
 * When one execution's steps happened, as each side saw them: the runtime's own clock when it sent
 * the request and received the answers, and the kernel's header dates of its `busy` status, its
 * `execute_reply` and its `idle` status. Both are wall clocks of the same machine, so the stages
 * between them can be told apart (the bench's execute timeline).
 */
import { wallClockMs } from "../platform/index.js";

/** A Jupyter header date (ISO 8601, microseconds) in epoch ms with its sub-millisecond digits; undefined when it is not one. */
export function headerDateMs(date: unknown): number | undefined {
  if (typeof date !== "string") return undefined;
  const whole = Date.parse(date);
  if (Number.isNaN(whole)) return undefined;
  const fraction = /\.(\d+)/.exec(date)?.[1] ?? "";
  // Date.parse keeps the milliseconds; the digits after the third are the rest of the fraction.
  return whole + (fraction.length > 3 ? Number(`0.${fraction.slice(3)}`) : 0);
}

/** Epoch ms of each step; a step that did not happen (yet) is absent. */
export interface ExecuteTimes {
  /** The runtime handed the execute_request to its socket. */
  readonly sent?: number;
  /** The kernel's header date of its `busy` status for the request. */
  readonly kernelBusy?: number;
  /** The kernel's header date of the `execute_reply`. */
  readonly kernelReply?: number;
  /** The kernel's header date of its `idle` status for the request. */
  readonly kernelIdle?: number;
  /** The runtime had the `execute_reply`. */
  readonly replyReceived?: number;
  /** The runtime had the `idle` status. */
  readonly idleReceived?: number;
  /** The execution settled (reply and idle both in). */
  readonly settled?: number;
}

/** Collects one execution's times; header dates are kept as text and parsed only when read. */
export class ExecuteTimeline {
  private readonly stamps: { -readonly [K in keyof ExecuteTimes]: number } = {};
  private readonly dates: { busy?: unknown; reply?: unknown; idle?: unknown } = {};

  /** Notes that the request goes out now. */
  sent(): void {
    this.stamps.sent = wallClockMs();
  }

  /** Notes a `busy` or `idle` status (its header date, and now as its arrival). */
  status(state: string, date: unknown): void {
    if (state === "busy") this.dates.busy = date;
    else if (state === "idle") (this.dates.idle = date), (this.stamps.idleReceived = wallClockMs());
  }

  /** Notes the `execute_reply`. */
  reply(date: unknown): void {
    this.dates.reply = date;
    this.stamps.replyReceived = wallClockMs();
  }

  /** Notes that the execution settled. */
  settled(): void {
    this.stamps.settled = wallClockMs();
  }

  /** The times known so far. */
  times(): ExecuteTimes {
    const kernel = { kernelBusy: headerDateMs(this.dates.busy), kernelReply: headerDateMs(this.dates.reply), kernelIdle: headerDateMs(this.dates.idle) };
    return { ...this.stamps, ...Object.fromEntries(Object.entries(kernel).filter(([, value]) => value !== undefined)) };
  }
}
