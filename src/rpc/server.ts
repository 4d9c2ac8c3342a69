import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { MAX_UNIX_SOCKET_PATH_BYTES, zeromq, type Log, type Zeromq } from "../platform/index.js";
import type { RpcAccess } from "../bridge/index.js";
import type { AppErrorCode } from "../errors/index.js";
import { RpcDispatcher } from "./dispatcher.js";
import { RPC_ARRIVAL_BYTES, RPC_ARRIVAL_MESSAGES, RPC_CALL_TIMEOUT_MS, RPC_CLIENT_DEADLINE_MARGIN_MS, RPC_DIAL_RETRY_MS, RPC_HARD_MESSAGE_BYTES, RPC_MAX_MESSAGE_BYTES, RPC_TOKEN_BYTES } from "./limits.js";
import { PeerGate } from "./gate.js";
import { RouteTable } from "./routes.js";
import { traceStep } from "./trace.js";

type Router = Zeromq.Router;

/** File name of the socket inside the session's run directory. */
export const RPC_SOCKET_NAME = "rpc";
/**
 * File name, beside RPC_SOCKET_NAME, of the socket a session's kernel binds for its main event loop
 * and the runtime dials: one connection the kernel cannot multiply, and no relay on the busiest path.
 */
export const RPC_KERNEL_SOCKET_NAME = "rpc-kernel";
/** Suffix of the ROUTER's private socket, a sibling of the run dir: outside what a sandbox mounts. */
const PRIVATE_SOCKET_SUFFIX = ".rpc";

/**
 * The kernel's own per-call deadline when the longest route may take `longestRouteMs`: the kernel
 * gives up only after the server would have, so a slow route (reload) is never abandoned early.
 */
export function clientDeadlineMs(longestRouteMs: number): number {
  return longestRouteMs + RPC_CLIENT_DEADLINE_MARGIN_MS;
}


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
  /** Path of the ROUTER's own socket, where no kernel can see it; default `<runDir>.rpc`, beside the run dir. */
  readonly privateSocket?: string;
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

/** Returns the socket path for `runDir`; throws when it, or the kernel's socket beside it, is longer than a Unix socket allows. */
export function rpcSocketPath(runDir: string): string {
  const dir = path.resolve(runDir);
  // The kernel's socket has the longest name of the three (the private one is `<runDir>.rpc`).
  const longest = path.join(dir, RPC_KERNEL_SOCKET_NAME);
  const bytes = Buffer.byteLength(longest, "utf8");
  if (bytes > MAX_UNIX_SOCKET_PATH_BYTES) {
    throw new Error(
      `RPC socket path ${longest} is ${bytes} bytes; Unix sockets allow at most ${MAX_UNIX_SOCKET_PATH_BYTES} ` +
        "(MAX_UNIX_SOCKET_PATH_BYTES): use a shorter state dir (ALBEDO_HOME)",
    );
  }
  return path.join(dir, RPC_SOCKET_NAME);
}

/**
 * One session's JSON-RPC channel (K-4, K-6): a ZeroMQ ROUTER that only answers peers presenting this
 * session's random token. Kernels reach it at `ipc://<runDir>/rpc`, a PeerGate relaying at most
 * MAX_RPC_PEERS_PER_SESSION connections to the ROUTER's private socket; a session's own kernel also
 * binds `<runDir>/rpc-kernel` for its main loop, which the ROUTER dials (dialKernel).
 */
export class RpcServer {
  readonly socketPath: string;
  readonly endpoint: string;
  /** Where the kernel's main loop listens for the ROUTER (RPC_KERNEL_SOCKET_NAME). */
  readonly kernelEndpoint: string;
  readonly token: string;
  private readonly privatePath: string;
  private readonly gate: PeerGate;
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
    this.kernelEndpoint = `ipc://${path.join(path.dirname(this.socketPath), RPC_KERNEL_SOCKET_NAME)}`;
    this.privatePath = options.privateSocket ?? `${path.dirname(this.socketPath)}${PRIVATE_SOCKET_SUFFIX}`;
    this.token = randomBytes(RPC_TOKEN_BYTES).toString("hex");
    this.logger = options.logger ?? stderrLogger;
    this.gate = new PeerGate({ publicPath: this.socketPath, privatePath: this.privatePath, logger: this.logger });
    this.callTimeoutMs = options.callTimeoutMs ?? RPC_CALL_TIMEOUT_MS;
    this.dispatcher = new RpcDispatcher({
      token: this.token,
      routes: options.routes ?? RouteTable.empty(),
      send: (peer, text) => this.send(peer, text),
      logger: this.logger,
      callTimeoutMs: this.callTimeoutMs,
    });
  }

  /** Binds the socket, opens the gate and starts serving; throws when binding fails or the server was started or closed. */
  async start(): Promise<void> {
    if (this.state !== "new") throw new Error(`RpcServer.start: server is already ${this.state}`);
    this.state = "running";
    const socket = new (zeromq().Router)({ maxMessageSize: RPC_HARD_MESSAGE_BYTES, linger: 0, reconnectInterval: RPC_DIAL_RETRY_MS });
    this.socket = socket;
    try {
      await socket.bind(`ipc://${this.privatePath}`);
      await this.gate.start();
    } catch (error) {
      await this.close();
      throw error;
    }
    this.loop = this.receiveLoop(socket);
  }

  /**
   * Dials the kernel's own socket (kernelEndpoint), now and again whenever it is down, so that a
   * session's kernel, each time it starts, gets one connection for its main loop. Call it once,
   * after start(), for a kernel that binds there (the session kernel does).
   */
  dialKernel(): void {
    if (this.state !== "running" || this.socket === undefined) throw new Error(`RpcServer.dialKernel: server is ${this.state}`);
    this.socket.connect(this.kernelEndpoint);
  }

  /** Connections the public socket holds now. */
  get peerCount(): number {
    return this.gate.held;
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

  /** Sends a notification to every kernel peer that said hello (a socket or a comm). */
  notify(method: string, params: unknown): void {
    this.dispatcher.notify(method, params);
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
    await this.gate.close();
    const socket = this.socket;
    this.socket = undefined;
    if (socket !== undefined) {
      await this.sending;
      socket.close();
      await this.loop;
    }
    await Promise.all([this.socketPath, this.privatePath].map((file) => rm(file, { force: true })));
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
