/**
 * The one-line denial notices (N-4) a console, `albedo exec` and the web console show as a denial
 * happens: the first denial of a host:port in a window is a line at once (host, reason, how to
 * allow it); its repeats in the window are counted and end in one line with the count; past
 * MAX_DENIAL_HOSTS_PER_WINDOW hosts in one window, the rest are summed into one line.
 */
import { DENIAL_REPEAT_WINDOW_MS, MAX_DENIAL_HOSTS_PER_WINDOW } from "./limits.js";
import { hostForPattern, parseHost } from "./patterns.js";
import type { ConnectionRecord } from "./record.js";

/** One denial line: the first of a host (count 1), its repeats in a window (count N), or the hosts past the window's bound (host ""). */
export interface DenialNotice {
  /** The host asked for, canonical; "" for the line that sums hosts past MAX_DENIAL_HOSTS_PER_WINDOW. */
  readonly host: string;
  /** 0 on the summing line. */
  readonly port: number;
  /** Why: `not in network.allow`, `denied by network.deny evil.example`, `resolves to 10.0.0.1, a private address`. */
  readonly reason: string;
  /** How to allow it: `allow it: albedo network allow evil.example`. */
  readonly hint: string;
  /** The denials this line stands for. */
  readonly count: number;
  /** The line as a terminal prints it, without a newline. */
  readonly text: string;
}

interface Pending {
  readonly first: ConnectionRecord;
  repeats: number;
}

/** Where denials come from: a session's egress. */
export interface RecordSource {
  onRecord(listener: (record: ConnectionRecord) => void): () => void;
}

/** Turns a session's denied connections into bounded denial lines for `listener`; `dispose` stops it (pending counts are said first). */
export class DenialLines {
  private readonly window = new Map<string, Pending>();
  private others = { hosts: new Set<string>(), count: 0 };
  private timer: NodeJS.Timeout | undefined;
  private readonly stop: () => void;

  constructor(source: RecordSource, private readonly listener: (notice: DenialNotice) => void, private readonly windowMs = DENIAL_REPEAT_WINDOW_MS) {
    this.stop = source.onRecord((record) => this.take(record));
  }

  private take(record: ConnectionRecord): void {
    if (record.decision !== "denied") return;
    const key = `${record.host}\0${record.port}`;
    const pending = this.window.get(key);
    if (pending !== undefined) pending.repeats += 1;
    else if (this.window.size >= MAX_DENIAL_HOSTS_PER_WINDOW) {
      this.others.hosts.add(key);
      this.others.count += 1;
    } else {
      this.window.set(key, { first: record, repeats: 0 });
      this.listener(denialNotice(record, 1));
    }
    this.timer ??= setTimeout(() => this.flush(), this.windowMs).unref();
  }

  /** Says the counts of the window now (a cell ended) and starts a new window. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const pending = [...this.window.values()];
    const others = this.others;
    this.window.clear();
    this.others = { hosts: new Set(), count: 0 };
    for (const { first, repeats } of pending) if (repeats > 0) this.listener(denialNotice(first, repeats, true));
    if (others.count > 0) {
      const hosts = `${others.hosts.size} other host${others.hosts.size === 1 ? "" : "s"}`;
      this.listener({
        host: "", port: 0, reason: `more than MAX_DENIAL_HOSTS_PER_WINDOW (${MAX_DENIAL_HOSTS_PER_WINDOW}) hosts denied within ${this.windowMs} ms`,
        hint: "albedo network show lists them", count: others.count,
        text: `network: blocked ${others.count} more connection${others.count === 1 ? "" : "s"} to ${hosts} — albedo network show lists them`,
      });
    }
  }

  dispose(): void {
    this.stop();
    this.flush();
  }
}

/** `network: blocked evil.example:443 (not in network.allow) — allow it: albedo network allow evil.example`, or its repeats' line. */
export function denialNotice(record: ConnectionRecord, count: number, repeats = false): DenialNotice {
  const parsed = parseHost(record.host);
  const host = parsed ? hostForPattern(parsed, record.port, true) : `${record.host}:${record.port}`;
  const reason = record.reason ?? "denied";
  const hint = record.hint ?? "";
  const text = repeats
    ? `network: blocked ${host} ${count} more time${count === 1 ? "" : "s"} (${reason})`
    : `network: blocked ${host} (${reason})${hint === "" ? "" : ` — ${hint}`}`;
  return { host: record.host, port: record.port, reason, hint, count, text };
}
