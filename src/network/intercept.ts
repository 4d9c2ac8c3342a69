/**
 * An intercepted tunnel (N-3), only for a host listed under `secrets`: the proxy answers the
 * CONNECT, speaks TLS to the client with a leaf from the local CA, reads each request, sets the
 * host's secret headers (a header of the same name from the client is replaced), and sends it on
 * over TLS it checks itself (the system's CAs plus `upstream_ca`) to the addresses it checked.
 */
import { Agent, request } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { LookupFunction } from "node:net";
import type { Duplex } from "node:stream";
import { TLSSocket, type ConnectionOptions } from "node:tls";
import { answer, answerRaw, ESTABLISHED } from "./answers.js";
import { BOUND_NAMES } from "./bounds.js";
import type { TrackedConnection } from "./connections.js";
import { headProblem, type ProxyContext } from "./context.js";
import { requestHeadersWithSecrets, SecretUnavailable } from "./headers.js";
import { MAX_RESPONSE_HEADER_BYTES } from "./limits.js";
import type { SecretHeader } from "./policy.js";
import { Exchange } from "./record.js";
import { relayExchange } from "./relay.js";
import { unreachable, type Route } from "./route.js";
import { hostHeaderProblem } from "./target.js";
import { TrustFileError, upstreamTrust } from "./trust.js";

/** Upstream connections one intercepted tunnel keeps open for its requests. */
const UPSTREAM_SOCKETS_PER_TUNNEL = 4;

export interface Interception {
  readonly tracked: TrackedConnection;
  readonly client: Duplex;
  readonly head: Buffer;
  readonly route: Route;
  readonly secrets: readonly SecretHeader[];
  readonly upstreamCa: string | undefined;
  /** The CONNECT's record: finished as the tunnel's own only when no request went through it. */
  readonly exchange: Exchange;
}

interface TunnelState extends Interception {
  readonly agent: Agent;
  requests: number;
  /** Starts the wait for the next request head (HEADERS_TIMEOUT_MS), or stops it while one is served. */
  awaiting(waiting: boolean): void;
}

const tunnels = new WeakMap<Duplex, TunnelState>();

/** Opens the intercepted tunnel on `inner`, the proxy's unlistened HTTP server for decrypted requests. */
export async function intercept(context: ProxyContext, interception: Interception): Promise<void> {
  const { client, route, exchange, tracked } = interception;
  const failed = (why: string) => {
    const refusal = unreachable(route.host, route.port, why);
    exchange.fail(refusal.reason);
    answerRaw(client, 502, refusal.line);
    exchange.finish();
  };
  if (!context.authority) return failed("it carries secrets, and the proxy was given no local CA to speak TLS for it");
  let secureContext;
  try {
    secureContext = await context.authority.contextFor(route.host.name);
  } catch (error) {
    return failed(`no certificate could be made for it: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (client.destroyed) return void exchange.finish();
  client.write(ESTABLISHED);
  if (interception.head.length > 0) client.unshift(interception.head);
  const tls = new TLSSocket(client as never, { isServer: true, secureContext, ALPNProtocols: ["http/1.1"] });
  // The handshake, and each request head after it, must come within HEADERS_TIMEOUT_MS: this server
  // never listens, so Node's own check of its headersTimeout never runs for it.
  let deadline: NodeJS.Timeout | undefined = setTimeout(() => tls.destroy(), context.bounds.headersTimeoutMs);
  const awaiting = (waiting: boolean) => {
    clearTimeout(deadline);
    deadline = waiting ? setTimeout(() => tls.destroy(), context.bounds.headersTimeoutMs) : undefined;
  };
  const state: TunnelState = { ...interception, agent: new Agent({ keepAlive: true, maxSockets: UPSTREAM_SOCKETS_PER_TUNNEL }), requests: 0, awaiting };
  tunnels.set(tls, state);
  tracked.own(tls);
  let secured = false;
  let failure: string | undefined;
  tls.once("secure", () => {
    secured = true;
    awaiting(true);
  });
  tls.once("error", (error) => (failure = error.message));
  tracked.whenClosed(() => {
    awaiting(false);
    state.agent.destroy();
    if (state.requests > 0) return;
    if (failure !== undefined) exchange.fail(`TLS with the client failed (${failure}); it must trust the local CA`);
    else if (!secured) exchange.fail(`the TLS handshake with the client did not finish: the client left (a client that does not trust the local CA does so) or took over ${context.bounds.headersTimeoutMs} ms (${BOUND_NAMES.headersTimeoutMs})`);
    // Node's clients, Python's and curl check the certificate once the handshake is done, and close.
    else exchange.fail("the client closed the tunnel before a request; a client that does not trust the local CA does so");
    exchange.finish();
  });
  context.inner.emit("connection", tls);
}

/** One request read inside an intercepted tunnel: checked, given its secrets, sent on. */
export async function interceptedRequest(context: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const state = tunnels.get(req.socket);
  if (!state) return void res.destroy();
  const { route, tracked } = state;
  state.requests += 1;
  state.awaiting(false);
  res.on("close", () => state.awaiting(true));
  tracked.touch();
  const method = req.method ?? "GET";
  const path = req.url ?? "";
  const exchange = new Exchange(context.onRecord, context.log, { host: route.host.name, port: route.port, method, path, intercepted: true });
  exchange.allow(route.rule);
  const refuse = (status: 400 | 414 | 431 | 502, line: string) => {
    exchange.fail(line.replace(/^albedo: /, ""));
    answer(res, status, line);
    exchange.finish();
  };
  const tooBig = headProblem(context, req);
  if (tooBig) return refuse(tooBig.status, tooBig.line);
  if (!path.startsWith("/")) return refuse(400, `albedo: a request inside a tunnel names a path, got ${JSON.stringify(path.slice(0, 100))}`);
  const mismatch = hostHeaderProblem(req.headers.host, route, 443);
  if (mismatch) return refuse(400, `albedo: ${mismatch}; refused`);
  let headers: string[];
  let secureContext;
  try {
    headers = requestHeadersWithSecrets(req.rawHeaders, state.secrets, context.env, route.host.name);
    secureContext = await upstreamTrust(state.upstreamCa);
  } catch (error) {
    if (!(error instanceof SecretUnavailable || error instanceof TrustFileError)) throw error;
    return refuse(502, unreachable(route.host, route.port, error.message).line);
  }
  const outgoing = request({
    host: route.host.name,
    port: route.port,
    method,
    path,
    headers,
    setHost: false,
    agent: state.agent,
    // tls.connect takes a prepared context; https's option type does not list it.
    ...({ secureContext } satisfies Pick<ConnectionOptions, "secureContext">),
    servername: route.host.name,
    lookup: checkedLookup(route),
    maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
  });
  outgoing.once("response", () => {
    const address = outgoing.socket?.remoteAddress;
    if (address) exchange.connectedTo(address);
  });
  relayExchange(req, res, outgoing, exchange, tracked, (why) => unreachable(route.host, route.port, why).line);
}

/** A lookup that answers with the route's checked addresses, so the agent connects to nothing else. */
function checkedLookup(route: Route): LookupFunction {
  return (_name, options, callback) => {
    const [first] = route.addresses;
    if (options.all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, route.addresses.map(({ address, family }) => ({ address, family })));
    else callback(null, first!.address, first!.family);
  };
}
