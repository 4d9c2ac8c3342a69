import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { zeromq, type Log, type Zeromq } from "../platform/index.js";
import type { RpcAccess } from "../bridge/index.js";
import type { AppErrorCode } from "../errors/index.js";
import { RPC_CALL_TIMEOUT_MS, RPC_MAX_MESSAGE_BYTES, RpcDispatcher } from "./dispatcher.js";
import { RouteTable } from "./routes.js";
import { traceStep } from "./trace.js";

type Router = Zeromq.Router;

/**
 * ZeroMQ's own inbound cap, in bytes: a peer sending a bigger frame is disconnected by libzmq before
 * the frame is buffered whole. Frames between RPC_MAX_MESSAGE_BYTES and this cap get an error reply.
 */
export const RPC_HARD_MESSAGE_BYTES = 8 * RPC_MAX_MESSAGE_BYTES;
/** Longest Unix socket path the kernel can connect to (sun_path is 108 bytes with its NUL). */
export const MAX_IPC_PATH_BYTES = 107;
/** File name of the socket inside the session's run directory. */
export const RPC_SOCKET_NAME = "rpc";
/** Bytes of randomness in a session token (hex-encoded on the wire). */
export const RPC_TOKEN_BYTES = 32;
/** Margin the kernel waits beyond the server deadline before giving up on its own. */
export const RPC_CLIENT_DEADLINE_MARGIN_MS = 5_000;

/**
 * The kernel's own per-call deadline when the longest route may take `longestRouteMs`: the kernel
 * gives up only after the server would have, so a slow route (reload) is never abandoned early.
 */
export function clientDeadlineMs(longestRouteMs: number): number {
  return longestRouteMs + RPC_CLIENT_DEADLINE_MARGIN_MS;
}

/**
 * Most messages, and bytes (checked after each message), taken off the socket as one arrival before
 * any is served: enough to share the disk checks of a burst, few enough that the first call of
 * a long burst is not held back for long.
 */
export const RPC_ARRIVAL_MESSAGES = 64;
export const RPC_ARRIVAL_BYTES = RPC_MAX_MESSAGE_BYTES;

/** Prefix of attached peers' ids; ROUTER peers are hex routing ids, so the two never collide. */
const ATTACHED_PREFIX = "attached:";

/** A peer that is not on the ROUTER socket (a remote kernel's comm, K-12). */
export interface AttachedPeer {
  /** Hands one JSON frame from the peer to the dispatcher, as if it came with this session's token. */
  receive(body: Buffer): void;
  /** Stops delivering replies to the peer; later ones are dropped. */
  detach(): void;
}

export interface RpcServerOptions {
  /** The session's private run directory (0700); the socket file is created inside it. */
  readonly runDir: string;
  readonly routes?: RouteTable;
  readonly logger?: Log;
  readonly callTimeoutMs?: number;
}

function sendNow(socket: Router, message: [Buffer, string]): Promise<void> {
  try {
    return socket.send(message);
  } catch (error) {
    return Promise.reject(error);
  }
}

function stderrLogger(level: string, message: string, fields?: Record<string, unknown>): void {
  const { stack: _stack, ...shown } = fields ?? {};
  process.stderr.write(`albedo ${level}: ${message} ${JSON.stringify(shown)}\n`);
}

/** Returns the socket path for `runDir`; throws when it is longer than a Unix socket allows. */
export function rpcSocketPath(runDir: string): string {
  const socketPath = path.join(path.resolve(runDir), RPC_SOCKET_NAME);
  const bytes = Buffer.byteLength(socketPath, "utf8");
  if (bytes > MAX_IPC_PATH_BYTES) {
    throw new Error(
      `RPC socket path ${socketPath} is ${bytes} bytes; Unix sockets allow at most ${MAX_IPC_PATH_BYTES} ` +
        "(MAX_IPC_PATH_BYTES): use a shorter state dir (ALBEDO_HOME)",
    );
  }
  return socketPath;
}

/**
 * One session's JSON-RPC channel (K-4, K-6): a ZeroMQ ROUTER on `ipc://<runDir>/rpc` that only
 * answers peers presenting this session's random token.
 */
export class RpcServer {
  readonly socketPath: string;
  readonly endpoint: string;
  readonly token: string;
  private readonly dispatcher: RpcDispatcher;
  private readonly logger: Log;
  private readonly callTimeoutMs: number;
  private socket: Router | undefined;
  private sending: Promise<void> = Promise.resolve();
  private sendsInFlight = 0;
  private loop: Promise<void> = Promise.resolve();
  private state: "new" | "running" | "closed" = "new";
  private readonly attached = new Map<string, (text: string) => void>();

  /** Prepares the server; throws when the socket path is too long. Nothing is bound until start(). */
  constructor(options: RpcServerOptions) {
    this.socketPath = rpcSocketPath(options.runDir);
    this.endpoint = `ipc://${this.socketPath}`;
    this.token = randomBytes(RPC_TOKEN_BYTES).toString("hex");
    this.logger = options.logger ?? stderrLogger;
    this.callTimeoutMs = options.callTimeoutMs ?? RPC_CALL_TIMEOUT_MS;
    this.dispatcher = new RpcDispatcher({
      token: this.token,
      routes: options.routes ?? RouteTable.empty(),
      send: (peer, text) => this.send(peer, text),
      logger: this.logger,
      callTimeoutMs: this.callTimeoutMs,
    });
  }

  /** Binds the socket and starts serving; throws when binding fails or the server was started or closed. */
  async start(): Promise<void> {
    if (this.state !== "new") throw new Error(`RpcServer.start: server is already ${this.state}`);
    this.state = "running";
    const socket = new (zeromq().Router)({ maxMessageSize: RPC_HARD_MESSAGE_BYTES, linger: 0 });
    this.socket = socket;
    try {
      await socket.bind(this.endpoint);
    } catch (error) {
      await this.close();
      throw error;
    }
    this.loop = this.receiveLoop(socket);
  }

  /**
   * How a kernel reaches this server: its address and token, the message limit, and a per-call
   * deadline read from the current route table. Ask once the session's routes are in place.
   */
  kernelAccess(): RpcAccess {
    return {
      endpoint: this.endpoint,
      token: this.token,
      deadlineMs: clientDeadlineMs(this.routes.longestTimeoutMs(this.callTimeoutMs)),
      maxMessageBytes: RPC_MAX_MESSAGE_BYTES,
    };
  }

  /** The current route table. */
  get routes(): RouteTable {
    return this.dispatcher.routes;
  }

  /** Number of calls in flight. */
  get pendingCount(): number {
    return this.dispatcher.pendingCount;
  }

  /** Swaps the route table in one step (K-7). */
  swapRoutes(table: RouteTable): void {
    this.dispatcher.swapRoutes(table);
  }

  /**
   * Adds a peer whose messages reach this server another way than the ROUTER (the comm of a remote
   * kernel, which proved the session secret when the comm was opened): its frames go through the
   * same dispatcher, route table, limits and cancellation, and its replies to `send`.
   */
  attachPeer(name: string, send: (text: string) => void): AttachedPeer {
    const peer = `${ATTACHED_PREFIX}${name}`;
    const token = Buffer.from(this.token, "utf8");
    this.attached.set(peer, send);
    return {
      receive: (body) => this.dispatcher.receive(peer, [token, body]),
      detach: () => void this.attached.delete(peer),
    };
  }

  /** Fails the cell's pending calls with `cancelled` and tells the kernel to cancel it; returns the count failed. */
  cancelCell(cell: string, reason?: string): number {
    return this.dispatcher.cancelCell(cell, reason);
  }

  /** Fails every pending call with `code`; returns the count failed. */
  failAll(code: AppErrorCode, message: string): number {
    return this.dispatcher.failAll(code, message);
  }

  /** Aborts pending handlers, closes the socket and removes its file. Idempotent; never throws. */
  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    this.dispatcher.close();
    const socket = this.socket;
    this.socket = undefined;
    if (socket !== undefined) {
      await this.sending;
      socket.close();
      await this.loop;
    }
    await rm(this.socketPath, { force: true });
  }

  private send(peer: string, text: string): void {
    if (peer.startsWith(ATTACHED_PREFIX)) {
      this.attached.get(peer)?.(text);
      return;
    }
    const socket = this.socket;
    if (socket === undefined) return;
    const message: [Buffer, string] = [Buffer.from(peer, "hex"), text];
    traceStep("replied");
    // A zeromq socket allows one send in flight: send at once when none is, else queue behind it.
    const sent = this.sendsInFlight === 0 ? sendNow(socket, message) : this.sending.then(() => socket.send(message));
    this.sendsInFlight++;
    this.sending = sent.then(
      () => void this.sendsInFlight--,
      (error: unknown) => {
        this.sendsInFlight--;
        if (this.state === "running") this.logger("warn", "rpc: reply not sent", { peer, error: String(error) });
      },
    );
  }

  private async receiveLoop(socket: Router): Promise<void> {
    try {
      // One awaited receive() per message: iterating the socket with `for await` wraps each message
      // in one more async call and result object, which a busy socket pays per message.
      for (;;) {
        // The messages already waiting join the first before any is served, so they share one
        // arrival (CallContext.arrival): each was sent before the first handler runs.
        const arrived: Buffer[][] = [];
        let bytes = 0;
        do {
          const message = await socket.receive();
          traceStep("received");
          arrived.push(message);
          bytes += message.reduce((sum, frame) => sum + frame.length, 0);
        } while (arrived.length < RPC_ARRIVAL_MESSAGES && bytes < RPC_ARRIVAL_BYTES && socket.readable);
        const arrival = {};
        for (const [identity, ...frames] of arrived) {
          if (identity !== undefined) this.dispatcher.receive(identity.toString("hex"), frames, arrival);
        }
        // One microtask: a handler whose promise is already settled sends its reply before the next receive.
        await undefined;
      }
    } catch (error) {
      // close() fails the pending receive; only a failure while running is news.
      if (this.state === "running") this.logger("error", "rpc: receive loop stopped", { error: String(error) });
    }
  }
}
