/**
 * From a requested host and port to a connected upstream socket (N-2): the policy decides by the
 * name, the proxy resolves the name itself and refuses internal addresses unless an exact allow
 * entry names the host and port, then connects to an address it checked (never to the name, so
 * nothing resolves it again).
 */
import { connect, type Socket } from "node:net";
import { classifyIp, parseIp } from "./addresses.js";
import { BOUND_NAMES, type ProxyBounds } from "./bounds.js";
import { MAX_CONNECT_ATTEMPTS } from "./limits.js";
import { hostForPattern, type Host } from "./patterns.js";
import { denialLine, internalDenial, type DenialKind, type NetworkPolicy } from "./policy.js";
import type { Exchange } from "./record.js";
import { LookupError, resolveWithin, type ResolvedAddress, type Resolver } from "./resolve.js";

/** Where a request may go: the rule that allowed it and the addresses checked for it. */
export interface Route {
  readonly host: Host;
  readonly port: number;
  readonly rule: string;
  readonly addresses: readonly ResolvedAddress[];
}

/** A refusal or failure on the way: the status and one-line body the client gets, and the record's words. */
export interface Refusal {
  readonly status: 403 | 502;
  readonly line: string;
  readonly reason: string;
  /** What refused it and how to let it through, for a denial (a failure has none). */
  readonly denial?: { readonly kind: DenialKind; readonly hint: string };
}

export interface RouteContext {
  readonly resolver: Resolver;
  readonly bounds: ProxyBounds;
}


/** The route to `host`:`port` under `policy`, or the refusal to answer with. */
async function findRoute(policy: NetworkPolicy, context: RouteContext, host: Host, port: number): Promise<Route | Refusal> {
  const decision = policy.decide(host, port);
  if (!decision.allowed) return { status: 403, line: denialLine(host, port, decision), reason: decision.reason, denial: { kind: decision.kind, hint: decision.hint } };
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = host.ip ? [{ address: host.name, family: host.ip.family }] : await resolveWithin(context.resolver, host.name, context.bounds.lookupTimeoutMs, BOUND_NAMES.lookupTimeoutMs);
  } catch (error) {
    if (!(error instanceof LookupError)) throw error;
    return unreachable(host, port, error.message);
  }
  for (const { address } of addresses) {
    const ip = parseIp(address);
    if (!ip) return unreachable(host, port, `the lookup gave ${JSON.stringify(address)}, not an address`);
    const found = classifyIp(ip);
    if (found.kind === "public" || decision.internalAllowed) continue;
    const denial = internalDenial(host, port, address, found);
    return { status: 403, line: denialLine(host, port, denial), reason: denial.reason, denial: { kind: "internal", hint: denial.hint } };
  }
  return { host, port, rule: decision.rule, addresses };
}

/** A 502 naming the host and what went wrong. */
export function unreachable(host: Host, port: number, why: string): Refusal {
  return { status: 502, line: `albedo: cannot reach ${hostForPattern(host, port)} (${why})`, reason: why };
}

/** Connects to the route's addresses in turn (at most MAX_CONNECT_ATTEMPTS) within connectTimeoutMs; throws an Error naming the last failure. */
async function connectRoute(route: Route, timeoutMs: number): Promise<{ socket: Socket; address: string }> {
  const deadline = Date.now() + timeoutMs;
  let last = "no address to try";
  for (const { address, family } of route.addresses.slice(0, MAX_CONNECT_ATTEMPTS)) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    try {
      return { socket: await connectOnce(address, family, route.port, left), address };
    } catch (error) {
      last = `${address}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  if (Date.now() >= deadline) last = `no connection within ${timeoutMs} ms (${BOUND_NAMES.connectTimeoutMs}); last: ${last}`;
  throw new Error(last);
}

/** One TCP connection to an IP address (no lookup), or a rejection after `timeoutMs`. */
function connectOnce(address: string, family: 4 | 6, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, family, noDelay: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const failed = (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(error.code ?? error.message));
    };
    socket.once("error", failed);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.off("error", failed);
      // Later errors end in "close", which the connection that owns the socket acts on.
      socket.on("error", () => undefined);
      resolve(socket);
    });
  });
}

/** How a handler answers its client with a status and one line. */
export type Reply = (status: Refusal["status"], line: string) => void;

/** The route under `policy`, its decision put on `exchange`; on a refusal the client is answered, the record finished, and undefined returned. */
export async function routeOrRefuse(policy: NetworkPolicy, context: RouteContext, target: { host: Host; port: number }, exchange: Exchange, reply: Reply): Promise<Route | undefined> {
  const found = await findRoute(policy, context, target.host, target.port);
  if (!("status" in found)) {
    exchange.allow(found.rule);
    return found;
  }
  if (found.denial) exchange.deny(found.denial.kind, found.reason, found.denial.hint);
  else exchange.fail(found.reason);
  reply(found.status, found.line);
  exchange.finish();
  return undefined;
}

/** A connection along `route`, its address put on `exchange`; when none can be made the client gets a 502 line, the record is finished, and undefined returned. */
export async function connectOrFail(route: Route, context: RouteContext, exchange: Exchange, reply: Reply): Promise<Socket | undefined> {
  try {
    const { socket, address } = await connectRoute(route, context.bounds.connectTimeoutMs);
    exchange.connectedTo(address);
    return socket;
  } catch (error) {
    const failed = unreachable(route.host, route.port, (error as Error).message);
    exchange.fail(failed.reason);
    reply(502, failed.line);
    exchange.finish();
    return undefined;
  }
}
