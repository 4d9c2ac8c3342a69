/**
 * The egress of one sandboxed kernel (N-1, N-2, N-4): its proxy on a Unix socket in the kernel's
 * run dir, the policy that proxy asks (the global setting the session opened with, or the
 * session's own since a user changed it), and the records of its connections, newest kept.
 * The kernel package reads EGRESS_SOCKET_ENV and EGRESS_CA_ENV, starts its relay on them and
 * sets the proxy variables for itself and its children (kernel/albedo/_egress.py).
 */
import { copyFile, chmod } from "node:fs/promises";
import { join } from "node:path";
import type { Log } from "../platform/index.js";
import { openLocalCa, type LocalCa } from "./ca.js";
import { describeNetwork, editNetworkSetting, type NetworkEdit } from "./edit.js";
import { MAX_RECORDS_PAGE, MAX_SESSION_RECORDS } from "./limits.js";
import { compilePolicy, type NetworkPolicy } from "./policy.js";
import { startEgressProxy, type EgressProxy } from "./proxy.js";
import type { ConnectionRecord } from "./record.js";
import type { NetworkSetting } from "./schema.js";

/** The variable naming the proxy's socket inside the sandbox (read by kernel/albedo/_egress.py). */
export const EGRESS_SOCKET_ENV = "ALBEDO_EGRESS_SOCKET";
/** The variable naming the CA bundle inside the sandbox, when the policy has secrets. */
export const EGRESS_CA_ENV = "ALBEDO_EGRESS_CA";
/** The proxy's socket, in the kernel's run dir (which the sandbox binds at its own path). */
export const EGRESS_SOCKET_NAME = "egress.sock";
/** The copy of the CA bundle the kernel trusts, in its run dir. */
export const EGRESS_CA_NAME = "egress-ca.pem";
const PUBLIC_FILE_MODE = 0o644;

/** A record with its place in the session's list, from 1. */
export interface NumberedRecord extends ConnectionRecord {
  readonly seq: number;
}

export interface EgressCounts {
  readonly allowed: number;
  readonly denied: number;
  readonly failed: number;
  readonly bytes: number;
  /** Records dropped from the list (past MAX_SESSION_RECORDS); still in the counts. */
  readonly dropped: number;
}

export interface EgressOptions {
  /** The kernel's run dir, as the sandbox shows it (its real path). */
  readonly runDir: string;
  /** Where the local CA lives (the state dir); opened only when the setting names secrets. */
  readonly caDir: string;
  /** The setting the session starts from: the global one (false when unset), or the session's own. */
  readonly setting: NetworkSetting;
  /** Whether `setting` is the session's own (given when it opened), not the global one. */
  readonly own?: boolean;
  /** Where secrets' variables are read (the daemon's environment). */
  readonly env?: NodeJS.ProcessEnv;
  readonly log?: Log;
}

/** The variables a sandboxed kernel gets for its egress under `setting`, before the proxy starts. */
export function egressEnv(runDir: string, setting: NetworkSetting): Record<string, string> {
  return { [EGRESS_SOCKET_ENV]: join(runDir, EGRESS_SOCKET_NAME), ...(hasSecrets(setting) ? { [EGRESS_CA_ENV]: join(runDir, EGRESS_CA_NAME) } : {}) };
}

const hasSecrets = (setting: NetworkSetting) => typeof setting === "object" && Object.keys(setting.secrets ?? {}).length > 0;

export class SessionEgress {
  private override: NetworkSetting | undefined;
  private policy: NetworkPolicy;
  private readonly kept: NumberedRecord[] = [];
  private seq = 0;
  private counts = { allowed: 0, denied: 0, failed: 0, bytes: 0, dropped: 0 };
  private readonly listeners = new Set<(record: NumberedRecord) => void>();
  private proxy: EgressProxy | undefined;

  private constructor(
    private readonly base: NetworkSetting,
    private readonly own: boolean,
  ) {
    this.policy = compilePolicy(base);
  }

  /** Starts the proxy on the run dir's socket (and, with secrets, the CA and its bundle in the run dir). Throws what the proxy or the CA throws. */
  static async start(options: EgressOptions): Promise<SessionEgress> {
    const egress = new SessionEgress(options.setting, options.own ?? false);
    let authority: LocalCa | undefined;
    if (hasSecrets(options.setting)) {
      authority = await openLocalCa(options.caDir);
      const copy = join(options.runDir, EGRESS_CA_NAME);
      await copyFile(authority.bundlePath, copy);
      await chmod(copy, PUBLIC_FILE_MODE);
    }
    egress.proxy = await startEgressProxy({
      socketPath: join(options.runDir, EGRESS_SOCKET_NAME),
      policy: () => egress.policy,
      onRecord: (record) => egress.keep(record),
      ...(authority ? { authority } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
    return egress;
  }

  /** The setting the next connection is decided by. */
  setting(): NetworkSetting {
    return this.override ?? this.base;
  }

  /** Whether the session opened with its own policy or changed it since (then `setting()` is the session's, not the global one). */
  get overridden(): boolean {
    return this.own || this.override !== undefined;
  }

  /** One line: off, a policy of N hosts, open. */
  describe(): string {
    return describeNetwork(this.setting());
  }

  /** Applies `edit` to the current setting for the next connection; throws NetworkEditError. */
  edit(edit: NetworkEdit): NetworkSetting {
    if ((edit.allow?.length ?? 0) === 0 && (edit.deny?.length ?? 0) === 0) return this.setting();
    return this.replace(editNetworkSetting(this.setting(), edit));
  }

  /** Back to the setting the session opened with. */
  reset(): NetworkSetting {
    this.override = undefined;
    this.policy = compilePolicy(this.base);
    return this.base;
  }

  private replace(next: NetworkSetting): NetworkSetting {
    const policy = compilePolicy(next);
    this.override = next;
    this.policy = policy;
    return next;
  }

  totals(): EgressCounts {
    return { ...this.counts };
  }

  /** Records after `after` (a seq), oldest first, at most `limit` (bounded by MAX_RECORDS_PAGE); `next` is the seq to pass on, or undefined at the end. */
  page(after: number, limit: number): { records: NumberedRecord[]; next: number | undefined } {
    const bounded = Math.max(1, Math.min(limit, MAX_RECORDS_PAGE));
    const start = this.kept.findIndex((record) => record.seq > after);
    const records = start < 0 ? [] : this.kept.slice(start, start + bounded);
    const last = records.at(-1);
    return { records, next: last !== undefined && last.seq < this.seq ? last.seq : undefined };
  }

  /**
   * Settles once the kernel holds no connection through the proxy, or after `timeoutMs`: the
   * records of connections a cell opened arrive as those connections close, a moment after it.
   */
  async settled(timeoutMs: number): Promise<void> {
    const proxy = this.proxy;
    if (proxy === undefined) return;
    const timeout = AbortSignal.timeout(timeoutMs);
    await proxy.idle(timeout);
  }

  /** Calls `listener` with each record as its connection ends; returns the function that stops it. */
  onRecord(listener: (record: NumberedRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private keep(record: ConnectionRecord): void {
    const numbered = { ...record, seq: ++this.seq };
    this.counts[record.decision] += 1;
    this.counts.bytes += record.bytesUp + record.bytesDown;
    this.kept.push(numbered);
    if (this.kept.length > MAX_SESSION_RECORDS) {
      this.kept.shift();
      this.counts.dropped += 1;
    }
    for (const listener of this.listeners) listener(numbered);
  }

  /** Stops the proxy: its socket goes, every connection closes. Idempotent. */
  async close(): Promise<void> {
    const proxy = this.proxy;
    this.proxy = undefined;
    this.listeners.clear();
    await proxy?.close();
  }
}
