/**
 * The public door of a session's RPC socket (B, K-4): a Unix socket server at the address the kernel
 * is given, relaying each connection's bytes unchanged to the ROUTER's private address, and holding
 * at most MAX_RPC_PEERS_PER_SESSION connections at once.
 *
 * Why not let the ROUTER listen there itself: libzmq accepts every connection a listener is
 * offered, and when the process runs out of descriptors its IPC listener aborts the whole process
 * (EMFILE is an assertion in ipc_listener.cpp). A kernel that opens a few thousand connections
 * would take every session down with it. Node counts connections as it accepts them, closes any
 * past the bound in the same step, and survives EMFILE; the ROUTER then only ever accepts this
 * gate's own connections.
 */
import net from "node:net";
import type { Log } from "../platform/index.js";
import { MAX_RPC_PEERS_PER_SESSION, RPC_REFUSAL_WINDOW_MS } from "./limits.js";

export interface PeerGateOptions {
  /** Path of the public socket the kernel connects to. */
  readonly publicPath: string;
  /** Path of the ROUTER's private socket, out of the kernel's sight. */
  readonly privatePath: string;
  readonly logger: Log;
  /** Connections held at once; default MAX_RPC_PEERS_PER_SESSION. */
  readonly maxPeers?: number;
}

/** Relays public connections to the ROUTER, at most `maxPeers` at once; stops listening while full. */
export class PeerGate {
  private readonly server: net.Server;
  private readonly peers = new Set<net.Socket>();
  private readonly maxPeers: number;
  private listening = false;
  private closed = false;
  private fullInWindow = 0;
  private window: NodeJS.Timeout | undefined;

  constructor(private readonly options: PeerGateOptions) {
    this.maxPeers = options.maxPeers ?? MAX_RPC_PEERS_PER_SESSION;
    this.server = net.createServer((socket) => this.admit(socket));
    // Node closes a connection past maxConnections as it accepts it, before any byte is read.
    this.server.maxConnections = this.maxPeers;
    this.server.on("drop", () => this.full());
    // EMFILE and friends on accept: libuv closes the connection it could not take; the gate lives on.
    this.server.on("error", (error) => this.options.logger("warn", "rpc: public socket error", { error: String(error) }));
  }

  /** Connections held now. */
  get held(): number {
    return this.peers.size;
  }

  /** Listens at the public path; rejects when it cannot. */
  async start(): Promise<void> {
    await this.listen();
  }

  /** Stops listening, ends every relayed connection and removes the public socket file. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.window);
    this.flushRefusals();
    for (const peer of this.peers) peer.destroy();
    this.peers.clear();
    if (this.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.listening = false;
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const failed = (error: Error) => reject(error);
      this.server.once("error", failed);
      this.server.listen(this.options.publicPath, () => {
        this.server.off("error", failed);
        this.listening = true;
        resolve();
      });
    });
  }

  private admit(socket: net.Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.peers.add(socket);
    const upstream = net.connect(this.options.privatePath);
    relay(socket, upstream);
    relay(upstream, socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
      if (this.peers.delete(socket)) this.resume();
    };
    for (const side of [socket, upstream]) side.on("close", end).on("error", end);
    if (this.peers.size >= this.maxPeers) this.pause();
  }

  /** Full: stop listening, so further connects fail in the kernel without waking the runtime. */
  private pause(): void {
    if (!this.listening) return;
    this.listening = false;
    this.server.close();
    this.full();
  }

  private resume(): void {
    if (this.closed || this.listening || this.peers.size >= this.maxPeers) return;
    // The kernel can write its run dir; if it put something at the path, the gate stays shut.
    this.listen().catch((error: unknown) => this.options.logger("warn", "rpc: public socket could not listen again", { error: String(error) }));
  }

  /** Logs the first time the gate fills (or drops a connection) in a window; the rest are counted into one line at its end. */
  private full(): void {
    if (this.fullInWindow === 0) {
      this.options.logger("warn", `rpc: the session holds MAX_RPC_PEERS_PER_SESSION (${this.maxPeers}) connections; further ones are refused until one ends`, { max: this.maxPeers });
      this.window = setTimeout(() => this.flushRefusals(), RPC_REFUSAL_WINDOW_MS).unref();
    }
    this.fullInWindow += 1;
  }

  private flushRefusals(): void {
    const more = this.fullInWindow - 1;
    this.fullInWindow = 0;
    if (more > 0) this.options.logger("warn", `rpc: the session reached MAX_RPC_PEERS_PER_SESSION (${this.maxPeers}) connections ${more} more times in the last minute`, { count: more, max: this.maxPeers });
  }
}

/** Copies `from` to `to`, pausing `from` while `to` is full. */
function relay(from: net.Socket, to: net.Socket): void {
  from.on("data", (chunk: Buffer) => {
    if (!to.write(chunk)) {
      from.pause();
      to.once("drain", () => from.resume());
    }
  });
}
