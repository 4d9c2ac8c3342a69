/**
 * The egress proxy of one session (N-2): an HTTP forward proxy (CONNECT for HTTPS and anything
 * else over TCP, absolute-URI requests for plain HTTP) on a Unix socket the caller names, with
 * its connections bounded (connections.ts). Node's HTTP parser reads every request head, with
 * the head's size and count bounds; the proxy answers what the policy refuses with one line.
 */
import { createServer, type IncomingMessage, type Server, type ServerOptions } from "node:http";
import { lstat, unlink } from "node:fs/promises";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { MAX_UNIX_SOCKET_PATH_BYTES, type Log } from "../platform/index.js";
import { answer, answeredRaw, answerRaw, type AnswerStatus } from "./answers.js";
import { BOUND_NAMES, resolveBounds, type ProxyBounds } from "./bounds.js";
import type { LocalCa } from "./ca.js";
import { ConnectionTable, type TrackedConnection } from "./connections.js";
import { recordRefusal, type ProxyContext } from "./context.js";
import { forwardRequest } from "./forward.js";
import { interceptedRequest } from "./intercept.js";
import type { NetworkPolicy } from "./policy.js";
import type { RecordListener } from "./record.js";
import { systemResolver, type Resolver } from "./resolve.js";
import { openTunnel } from "./tunnel.js";

export interface EgressProxyOptions {
  /** Where to listen: a path in the session's run dir. A stale socket there is replaced; anything else is an error. */
  readonly socketPath: string;
  /** The policy current now; read for every new connection, so a change applies to the next one. */
  readonly policy: () => NetworkPolicy;
  /** Receives every connection's record as it ends. */
  readonly onRecord: RecordListener;
  /** Default: getaddrinfo, bounded process-wide (systemResolver). */
  readonly resolver?: Resolver;
  /** Where secrets' variables are read, at each request; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** The local CA, needed to intercept secrets hosts (openLocalCa); without it their CONNECTs fail with a 502 line. */
  readonly authority?: LocalCa;
  readonly bounds?: Partial<ProxyBounds>;
  readonly log?: Log;
}

export interface EgressProxy {
  readonly socketPath: string;
  /** Client connections held now. */
  connections(): number;
  /** Settles once the proxy holds no client connection, or when `signal` aborts. */
  idle(signal: AbortSignal): Promise<void>;
  /** Stops listening, closes every connection and removes the socket file. */
  close(): Promise<void>;
}

/** The proxy could not start; the message names the path and why. */
export class EgressProxyError extends Error {
  override readonly name = "EgressProxyError";
}

/** Starts a proxy listening on `options.socketPath`; throws EgressProxyError (path too long, occupied by a non-socket) or the listen error. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const bounds = resolveBounds(options.bounds);
  await claimSocketPath(options.socketPath);
  const table = new ConnectionTable(bounds);
  const owners = new WeakMap<Duplex, TrackedConnection>();
  const serverOptions: ServerOptions = {
    maxHeaderSize: bounds.maxHeaderBlockBytes,
    headersTimeout: bounds.headersTimeoutMs,
    requestTimeout: 0,
    keepAliveTimeout: bounds.idleTimeoutMs,
    connectionsCheckingInterval: bounds.sweepIntervalMs,
  };
  const inner = createServer(serverOptions);
  const context: ProxyContext = {
    policy: options.policy,
    onRecord: options.onRecord,
    ...(options.log ? { log: options.log } : {}),
    env: options.env ?? process.env,
    ...(options.authority ? { authority: options.authority } : {}),
    resolver: options.resolver ?? systemResolver,
    bounds,
    inner,
    connectionOf: (socket) => owners.get(socket),
  };
  const outer = createServer(serverOptions);
  for (const server of [outer, inner]) {
    server.maxHeadersCount = bounds.maxHeaderCount + 1;
    server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => refuseUnreadable(context, error, socket));
    server.on("upgrade", (_req: IncomingMessage, socket: Duplex) => {
      recordRefusal(context, "an Upgrade request over plain HTTP is not forwarded", { host: "", port: 0 });
      answerRaw(socket, 501, "albedo: the proxy does not forward Upgrade requests (WebSocket) over plain HTTP; use wss://, which goes through CONNECT");
    });
  }
  outer.on("connection", (socket: Socket) => admit(table, owners, socket, bounds));
  outer.on("request", (req, res) => void forwardRequest(context, req, res).catch((error: unknown) => internalFailure(context, error, () => answer(res, 502, "albedo: the proxy failed"))));
  outer.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => void openTunnel(context, req, socket, head).catch((error: unknown) => internalFailure(context, error, () => socket.destroy())));
  inner.on("request", (req, res) => void interceptedRequest(context, req, res).catch((error: unknown) => internalFailure(context, error, () => answer(res, 502, "albedo: the proxy failed"))));
  await new Promise<void>((resolve, reject) => {
    outer.once("error", reject);
    outer.listen(options.socketPath, () => {
      outer.off("error", reject);
      resolve();
    });
  });
  return {
    socketPath: options.socketPath,
    connections: () => table.size,
    idle: (signal) => table.whenEmpty(signal),
    close: () => closeProxy(outer, inner, table, options.socketPath),
  };
}

/** Refuses a socket path too long for a Unix socket or taken by something other than a socket; removes a stale socket. */
async function claimSocketPath(path: string): Promise<void> {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_UNIX_SOCKET_PATH_BYTES) throw new EgressProxyError(`the proxy's socket path ${path} is ${bytes} bytes; a Unix socket path is at most ${MAX_UNIX_SOCKET_PATH_BYTES} (MAX_UNIX_SOCKET_PATH_BYTES)`);
  const found = await lstat(path).catch(() => undefined);
  if (!found) return;
  if (!found.isSocket()) throw new EgressProxyError(`the proxy's socket path ${path} is taken by something that is not a socket`);
  await unlink(path);
}

/** Tracks a new client connection, or refuses it with a 503 line when the table is full of busy ones. */
function admit(table: ConnectionTable, owners: WeakMap<Duplex, TrackedConnection>, socket: Socket, bounds: ProxyBounds): void {
  const tracked = table.admit(socket);
  if (tracked) {
    owners.set(socket, tracked);
    tracked.own(socket);
    return;
  }
  socket.on("error", () => undefined);
  answerRaw(socket, 503, `albedo: the proxy holds ${bounds.maxConnections} busy connections (${BOUND_NAMES.maxConnections}); try again when one ends`);
}

/** Answers a request Node's parser refused: too long a line (414) or head (431), too slow (408), or malformed (400). */
function refuseUnreadable(context: ProxyContext, error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  if (answeredRaw(socket)) return;
  const { bounds } = context;
  let status: AnswerStatus = 400;
  let line = `albedo: the proxy cannot read the request (${error.code ?? error.message})`;
  if (error.code === "HPE_HEADER_OVERFLOW") {
    const firstLine = error.rawPacket?.indexOf("\r\n") ?? -1;
    const longLine = firstLine < 0 || firstLine > bounds.maxRequestLineBytes;
    status = longLine ? 414 : 431;
    line = longLine
      ? `albedo: the request line is over ${bounds.maxRequestLineBytes} bytes (${BOUND_NAMES.maxRequestLineBytes})`
      : `albedo: the request head is over ${bounds.maxHeaderBlockBytes} bytes (${BOUND_NAMES.maxHeaderBlockBytes})`;
  } else if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    status = 408;
    line = `albedo: the request head took over ${bounds.headersTimeoutMs} ms (${BOUND_NAMES.headersTimeoutMs})`;
  }
  if (error.code !== "ECONNRESET") recordRefusal(context, line.replace(/^albedo: /, ""), { host: "", port: 0 });
  answerRaw(socket, status, line);
}

/** A handler's own bug: logged, the client answered or dropped, the proxy kept running. */
function internalFailure(context: ProxyContext, error: unknown, after: () => void): void {
  context.log?.("error", "network: the proxy failed on a request", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  after();
}

async function closeProxy(outer: Server, inner: Server, table: ConnectionTable, socketPath: string): Promise<void> {
  const closed = new Promise<void>((resolve) => outer.close(() => resolve()));
  inner.close();
  table.close();
  outer.closeAllConnections();
  await closed;
  await unlink(socketPath).catch(() => undefined);
}
