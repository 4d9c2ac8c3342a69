/** The per-proxy bounds: limits.ts's values unless the caller gives its own (tests shrink them to reach each edge). */
import {
  CONNECT_TIMEOUT_MS, CONNECTION_LIFETIME_MS, DNS_LOOKUP_TIMEOUT_MS, EVICTABLE_IDLE_MS, HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, MAX_HEADER_BLOCK_BYTES,
  MAX_HEADER_COUNT, MAX_PROXY_CONNECTIONS, MAX_REQUEST_LINE_BYTES, SWEEP_INTERVAL_MS,
} from "./limits.js";

export interface ProxyBounds {
  readonly maxConnections: number;
  readonly evictableIdleMs: number;
  readonly maxRequestLineBytes: number;
  readonly maxHeaderBlockBytes: number;
  readonly maxHeaderCount: number;
  readonly headersTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly lifetimeMs: number;
  readonly sweepIntervalMs: number;
  readonly connectTimeoutMs: number;
  readonly lookupTimeoutMs: number;
}

/** The defaults, each named after its constant so a message can say which bound was reached. */
export const DEFAULT_BOUNDS: ProxyBounds = {
  maxConnections: MAX_PROXY_CONNECTIONS,
  evictableIdleMs: EVICTABLE_IDLE_MS,
  maxRequestLineBytes: MAX_REQUEST_LINE_BYTES,
  maxHeaderBlockBytes: MAX_HEADER_BLOCK_BYTES,
  maxHeaderCount: MAX_HEADER_COUNT,
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  idleTimeoutMs: IDLE_TIMEOUT_MS,
  lifetimeMs: CONNECTION_LIFETIME_MS,
  sweepIntervalMs: SWEEP_INTERVAL_MS,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  lookupTimeoutMs: DNS_LOOKUP_TIMEOUT_MS,
};

/** The constant each bound defaults to, for messages. */
export const BOUND_NAMES: Readonly<Record<keyof ProxyBounds, string>> = {
  maxConnections: "MAX_PROXY_CONNECTIONS",
  evictableIdleMs: "EVICTABLE_IDLE_MS",
  maxRequestLineBytes: "MAX_REQUEST_LINE_BYTES",
  maxHeaderBlockBytes: "MAX_HEADER_BLOCK_BYTES",
  maxHeaderCount: "MAX_HEADER_COUNT",
  headersTimeoutMs: "HEADERS_TIMEOUT_MS",
  idleTimeoutMs: "IDLE_TIMEOUT_MS",
  lifetimeMs: "CONNECTION_LIFETIME_MS",
  sweepIntervalMs: "SWEEP_INTERVAL_MS",
  connectTimeoutMs: "CONNECT_TIMEOUT_MS",
  lookupTimeoutMs: "DNS_LOOKUP_TIMEOUT_MS",
};

/** The defaults with `given` over them; throws naming a bound that is not a positive integer. */
export function resolveBounds(given: Partial<ProxyBounds> = {}): ProxyBounds {
  const bounds = { ...DEFAULT_BOUNDS, ...given };
  for (const [key, value] of Object.entries(bounds)) {
    if (!Number.isInteger(value) || value <= 0) throw new RangeError(`proxy bound ${key} (${BOUND_NAMES[key as keyof ProxyBounds]}) must be a positive integer, got ${String(value)}`);
  }
  return bounds;
}
