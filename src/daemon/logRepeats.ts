import { LOG_REPEAT_WINDOW_MS, MAX_LOG_REPEATS, MAX_LOG_REPEAT_KEYS } from "./limits.js";

/** The key under which messages beyond MAX_LOG_REPEAT_KEYS are counted together. */
export const OTHER_MESSAGES = "(other messages)";

export interface RepeatLimits {
  readonly windowMs?: number;
  readonly maxRepeats?: number;
  readonly maxKeys?: number;
}

/**
 * Lets the first `maxRepeats` entries of each message through per window and counts the rest,
 * so a peer that can make the daemon log one line (a forged kernel message, say) cannot make it
 * write millions. When a window ends, `summarise` gets each message's suppressed count.
 */
export class RepeatFilter {
  private readonly seen = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly windowMs: number;
  private readonly maxRepeats: number;
  private readonly maxKeys: number;

  constructor(
    private readonly summarise: (key: string, suppressed: number) => void,
    limits: RepeatLimits = {},
  ) {
    this.windowMs = limits.windowMs ?? LOG_REPEAT_WINDOW_MS;
    this.maxRepeats = limits.maxRepeats ?? MAX_LOG_REPEATS;
    this.maxKeys = limits.maxKeys ?? MAX_LOG_REPEAT_KEYS;
  }

  /** True when an entry with this key may be written now; false when it is only counted. */
  admit(key: string): boolean {
    this.timer ??= setTimeout(() => this.flush(), this.windowMs).unref();
    const counted = this.seen.has(key) || this.seen.size < this.maxKeys ? key : OTHER_MESSAGES;
    const count = (this.seen.get(counted) ?? 0) + 1;
    this.seen.set(counted, count);
    return count <= this.maxRepeats;
  }

  /** Ends the window now: reports what was suppressed and starts counting afresh. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const over = [...this.seen].filter(([, count]) => count > this.maxRepeats);
    this.seen.clear();
    for (const [key, count] of over) this.summarise(key, count - this.maxRepeats);
  }
}
