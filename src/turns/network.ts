/**
 * The `network` rows of a python step (N-4): the session's connection records whose request came
 * while the step's cell ran, one row per host and decision, drawn once the cell ended and the
 * connections it opened closed (at most NETWORK_STEP_SETTLE_MS later).
 */
import { humanSize } from "../json/index.js";
import type { ConnectionRecord, SessionEgress } from "../network/index.js";
import { MAX_NETWORK_ROWS_PER_STEP, NETWORK_STEP_SETTLE_MS } from "./limits.js";
import type { TranscriptRow } from "./rows.js";

type NetworkRow = Extract<TranscriptRow, { kind: "network" }>;

/** The records of one python step, gathered from its start until `finish`. */
export class NetworkStep {
  private readonly records: ConnectionRecord[] = [];
  private readonly startedAt = Date.now();
  private stop: (() => void) | undefined;

  constructor(private readonly egress: SessionEgress | undefined) {
    this.stop = egress?.onRecord((record) => this.records.push(record));
  }

  /** Waits for the step's connections to close, stops gathering, and answers its rows (empty after the first call). */
  async finish(): Promise<TranscriptRow[]> {
    if (this.stop === undefined) return [];
    const endedAt = Date.now();
    await this.egress?.settled(NETWORK_STEP_SETTLE_MS);
    return this.end(endedAt);
  }

  /** Stops gathering at once (a step that failed) and answers its rows (empty after the first call). */
  end(endedAt = Date.now()): TranscriptRow[] {
    if (this.stop === undefined) return [];
    this.stop();
    this.stop = undefined;
    return networkRows(this.records.filter((record) => record.at >= this.startedAt && record.at <= endedAt));
  }
}

/** One row per host and decision, in the order the hosts were first reached; hosts past MAX_NETWORK_ROWS_PER_STEP summed in a notice. */
export function networkRows(records: readonly ConnectionRecord[]): TranscriptRow[] {
  const groups = new Map<string, ConnectionRecord[]>();
  for (const record of records) {
    // A request the proxy could not read far enough to name a host reached none.
    if (record.host === "") continue;
    const key = `${record.decision}\0${record.host}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [record]);
    else group.push(record);
  }
  const all = [...groups.values()];
  const rows: TranscriptRow[] = all.slice(0, MAX_NETWORK_ROWS_PER_STEP).map(networkRow);
  const rest = all.slice(MAX_NETWORK_ROWS_PER_STEP);
  if (rest.length > 0) {
    const connections = rest.reduce((sum, group) => sum + group.length, 0);
    rows.push({ kind: "notice", text: `network: ${connections} more connection${plural(connections)} to ${rest.length} more host${plural(rest.length)} (past MAX_NETWORK_ROWS_PER_STEP = ${MAX_NETWORK_ROWS_PER_STEP}); albedo network show lists them` });
  }
  return rows;
}

function networkRow(group: readonly ConnectionRecord[]): NetworkRow {
  const first = group[0]!;
  const connections = group.length;
  const bytes = group.reduce((sum, record) => sum + record.bytesUp + record.bytesDown, 0);
  const count = `${connections} connection${plural(connections)}`;
  const base = { kind: "network" as const, host: first.host, decision: first.decision, connections, bytes };
  switch (first.decision) {
    case "allowed":
      return { ...base, rule: first.rule ?? null, reason: null, text: `used network ${first.host} · ${count} · ${humanSize(bytes)}` };
    case "denied":
      return { ...base, rule: null, reason: first.reason ?? null, text: `blocked network ${first.host}${connections > 1 ? ` · ${count}` : ""} (${first.reason ?? "denied"})` };
    case "failed":
      return { ...base, rule: first.rule ?? null, reason: first.reason ?? null, text: `failed network ${first.host}${connections > 1 ? ` · ${count}` : ""} (${first.reason ?? "failed"})` };
  }
}

const plural = (count: number) => (count === 1 ? "" : "s");
