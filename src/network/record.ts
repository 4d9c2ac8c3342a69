/**
 * The record of one proxied connection or request (N-4), handed to the caller's listener once it
 * ends. The proxy keeps none: the caller decides what history to hold. A record never carries a
 * header, so no secret reaches it.
 */
import type { Log } from "../platform/index.js";
import { MAX_RECORD_PATH_CHARS } from "./limits.js";
import type { DenialKind } from "./policy.js";

export interface ConnectionRecord {
  /** When the request arrived, ms since the epoch. */
  readonly at: number;
  /** The host asked for, canonical; "" when the request could not be read far enough to name one. */
  readonly host: string;
  /** 0 when unknown. */
  readonly port: number;
  /** CONNECT for a tunnel; the request's method for a forwarded or intercepted request. */
  readonly method?: string;
  /** The request path (origin form, cut to MAX_RECORD_PATH_CHARS) when the proxy saw it: plain HTTP and intercepted hosts. */
  readonly path?: string;
  readonly decision: "allowed" | "denied" | "failed";
  /** The setting that allowed it (allowed). */
  readonly rule?: string;
  /** Why it was refused or failed. */
  readonly reason?: string;
  /** What refused it (denied). */
  readonly denial?: DenialKind;
  /** How to let it through (denied): `allow it: albedo network allow pypi.org`. */
  readonly hint?: string;
  /** Whether the proxy terminated TLS to add headers (a secrets host). */
  readonly intercepted: boolean;
  /** The upstream address connected to. */
  readonly address?: string;
  /** Bytes from the client to the upstream (a tunnel's raw bytes; a request's body). */
  readonly bytesUp: number;
  /** Bytes from the upstream to the client. */
  readonly bytesDown: number;
  readonly durationMs: number;
}

/** Receives each record as its connection or request ends. */
export type RecordListener = (record: ConnectionRecord) => void;

/** One record being filled in; `finish` hands it to the listener once. */
export class Exchange {
  bytesUp = 0;
  bytesDown = 0;
  private readonly at = Date.now();
  private readonly started = performance.now();
  private fields: Partial<ConnectionRecord> = {};
  private done = false;

  constructor(
    private readonly listener: RecordListener,
    private readonly log: Log | undefined,
    private readonly target: { host: string; port: number; method?: string; path?: string; intercepted?: boolean },
  ) {}

  allow(rule: string): void {
    this.fields = { ...this.fields, decision: "allowed", rule };
  }

  connectedTo(address: string): void {
    this.fields = { ...this.fields, address };
  }

  deny(kind: DenialKind, reason: string, hint: string): void {
    this.fields = { decision: "denied", denial: kind, reason, hint };
  }

  /** Marks a failure (lookup, connect, upstream, client); an allowed exchange keeps its rule. */
  fail(reason: string): void {
    this.fields = { ...this.fields, decision: "failed", reason };
  }

  /** Sends the record to the listener, once; a listener that throws is logged, never the proxy's failure. */
  finish(): void {
    if (this.done) return;
    this.done = true;
    const { method, path } = this.target;
    const record: ConnectionRecord = {
      at: this.at,
      host: this.target.host,
      port: this.target.port,
      ...(method === undefined ? {} : { method }),
      ...(path === undefined ? {} : { path: path.length > MAX_RECORD_PATH_CHARS ? `${path.slice(0, MAX_RECORD_PATH_CHARS)}…` : path }),
      decision: "failed",
      ...this.fields,
      intercepted: this.target.intercepted ?? false,
      bytesUp: this.bytesUp,
      bytesDown: this.bytesDown,
      durationMs: Math.round((performance.now() - this.started) * 1000) / 1000,
    };
    try {
      this.listener(record);
    } catch (error) {
      this.log?.("warn", "network: the connection record listener threw", { error: String(error) });
    }
  }
}
