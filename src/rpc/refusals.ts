import type { PeerId } from "./dispatcher.js";
import { RPC_MAX_REFUSAL_PEERS, RPC_REFUSAL_WINDOW_MS } from "./limits.js";
import type { Log } from "../platform/index.js";

/** What a peer sent that the channel refused or ignored without running anything. */
export type RefusalKind = "token" | "oversized" | "notification";

const MESSAGES: Readonly<Record<RefusalKind, { level: "info" | "warn"; first: string; more: (count: number) => string }>> = {
  token: {
    level: "warn",
    first: "rpc: refused a message with a missing or wrong token",
    more: (count) => `rpc: refused ${count} more messages with a missing or wrong token in the last minute`,
  },
  oversized: { level: "warn", first: "rpc: refused oversized message", more: (count) => `rpc: refused ${count} more oversized messages in the last minute` },
  notification: { level: "info", first: "rpc: ignored a notification", more: (count) => `rpc: ignored ${count} more notifications in the last minute` },
};

/** The key refusals of untracked peers are counted under. */
const OTHER_PEERS = "(other peers)";

/**
 * Logs refusals so that a flood costs a bounded number of lines: per window, the first refusal of
 * each kind from each of up to RPC_MAX_REFUSAL_PEERS peers is logged as it happens, and every
 * further one is counted and reported in one line per peer and kind when the window ends (or the
 * channel closes). A peer that opens a new socket per message lands in the shared "other peers"
 * count once the window tracks RPC_MAX_REFUSAL_PEERS of them.
 */
export class RefusalLog {
  private readonly counts = new Map<string, { kind: RefusalKind; peer: string; count: number }>();
  private readonly peers = new Set<PeerId>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Log,
    private readonly windowMs = RPC_REFUSAL_WINDOW_MS,
  ) {}

  /** Records one refusal; `fields` go with the line when this one is logged at once. */
  refused(kind: RefusalKind, peer: PeerId, fields: Record<string, unknown>): void {
    this.timer ??= setTimeout(() => this.flush(), this.windowMs).unref();
    if (!this.peers.has(peer) && this.peers.size < RPC_MAX_REFUSAL_PEERS) this.peers.add(peer);
    const who = this.peers.has(peer) ? peer : OTHER_PEERS;
    const key = `${kind} ${who}`;
    const seen = this.counts.get(key);
    if (seen !== undefined) {
      seen.count += 1;
      return;
    }
    this.counts.set(key, { kind, peer: who, count: who === OTHER_PEERS ? 1 : 0 });
    if (who !== OTHER_PEERS) this.logger(MESSAGES[kind].level, MESSAGES[kind].first, { peer, ...fields });
  }

  /** Ends the window: one line per peer and kind with refusals not yet logged. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const counted = [...this.counts.values()].filter((entry) => entry.count > 0);
    this.counts.clear();
    this.peers.clear();
    for (const { kind, peer, count } of counted) this.logger(MESSAGES[kind].level, MESSAGES[kind].more(count), { peer, count, window_ms: this.windowMs });
  }
}
