/** What every handler of one proxy shares: its policy getter, bounds, resolver, record listener and connections. */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Log } from "../platform/index.js";
import { BOUND_NAMES } from "./bounds.js";
import type { LocalCa } from "./ca.js";
import type { TrackedConnection } from "./connections.js";
import type { NetworkPolicy } from "./policy.js";
import { Exchange, type RecordListener } from "./record.js";
import type { RouteContext } from "./route.js";

export interface ProxyContext extends RouteContext {
  /** The policy current now: read once per connection (per request for plain HTTP). */
  readonly policy: () => NetworkPolicy;
  readonly onRecord: RecordListener;
  readonly log?: Log;
  /** Where secrets are read, at each request. */
  readonly env: NodeJS.ProcessEnv;
  readonly authority?: LocalCa;
  /** The proxy's unlistened HTTP server that reads the requests inside intercepted tunnels. */
  readonly inner: Server;
  /** The tracked connection a client socket belongs to. */
  connectionOf(socket: Duplex): TrackedConnection | undefined;
}

/** Bytes of a parsed request line: method, target, version and the spaces and CRLF between. */
function requestLineBytes(req: IncomingMessage): number {
  return Buffer.byteLength(`${req.method ?? ""} ${req.url ?? ""} HTTP/${req.httpVersion}\r\n`);
}

/** The answer to a parsed head over a bound (its request line, its count of headers), or undefined. */
export function headProblem(context: ProxyContext, req: IncomingMessage): { status: 414 | 431; line: string } | undefined {
  const { maxRequestLineBytes, maxHeaderCount } = context.bounds;
  const bytes = requestLineBytes(req);
  if (bytes > maxRequestLineBytes) return { status: 414, line: `albedo: the request line is ${bytes} bytes; at most ${maxRequestLineBytes} (${BOUND_NAMES.maxRequestLineBytes})` };
  // The parser keeps one header past the bound (maxHeadersCount), so a head with more is seen, not cut.
  const headers = req.rawHeaders.length / 2;
  if (headers > maxHeaderCount) return { status: 431, line: `albedo: the request has over ${maxHeaderCount} headers (${BOUND_NAMES.maxHeaderCount})` };
  return undefined;
}

/** Records a request refused before it named a usable target (host "" unless known). */
export function recordRefusal(context: ProxyContext, reason: string, target: { host: string; port: number; method?: string }): void {
  const exchange = new Exchange(context.onRecord, context.log, target);
  exchange.fail(reason);
  exchange.finish();
}
