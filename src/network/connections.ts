/**
 * The client connections one proxy holds (N-6): at most `maxConnections`, each closed when idle
 * or past its lifetime by one sweep per proxy, the one idle longest dropped to make room for a
 * new one. A connection owns the upstream sockets opened for it: closing either end closes all.
 * Activity is read from the sockets' byte counters when the sweep or an admission looks, so bytes
 * on their way cost no listener per chunk.
 */
import type { Duplex } from "node:stream";
import type { ProxyBounds } from "./bounds.js";

/** A socket's byte counters (net.Socket's; a plain Duplex has none). */
interface Counted {
  readonly bytesRead?: number;
  readonly bytesWritten?: number;
}

/** One client connection and the upstream sockets it uses. */
export class TrackedConnection {
  readonly startedAt = Date.now();
  private lastActivity = this.startedAt;
  private bytesMoved = 0;
  private readonly sockets = new Set<Duplex>();
  private readonly onClose: Array<() => void> = [];
  private closed = false;

  constructor(readonly client: Duplex) {
    this.own(client);
  }

  /** Marks traffic now; the idle clock starts again. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /** How long nothing has moved, at `now` (traffic since the last look counts as moving now). */
  idleFor(now: number): number {
    let total = 0;
    for (const socket of this.sockets) total += ((socket as Counted).bytesRead ?? 0) + ((socket as Counted).bytesWritten ?? 0);
    if (total !== this.bytesMoved) {
      this.bytesMoved = total;
      this.lastActivity = now;
    }
    return now - this.lastActivity;
  }

  /** Ties `socket` to this connection: closing the connection closes it; its closing on an error, or the client's, closes the connection. */
  own(socket: Duplex): void {
    if (this.sockets.has(socket)) return;
    // Every failure ends in "close", where it is acted on; an unheard "error" would end the process.
    socket.on("error", () => undefined);
    if (this.closed) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once("close", (hadError: boolean) => {
      this.sockets.delete(socket);
      if (socket === this.client || hadError) this.destroy();
    });
  }

  /** Runs `action` once the connection is gone (immediately when it already is). */
  whenClosed(action: () => void): void {
    if (this.closed) action();
    else this.onClose.push(action);
  }

  /** Closes the client and every upstream socket; runs the close actions once. */
  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    for (const socket of this.sockets) socket.destroy();
    for (const action of this.onClose.splice(0)) action();
  }
}

/** The proxy's table of connections, bounded and swept. */
export class ConnectionTable {
  private readonly live = new Set<TrackedConnection>();
  private readonly emptyWaiters = new Set<() => void>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly bounds: ProxyBounds) {
    this.timer = setInterval(() => this.sweep(Date.now()), bounds.sweepIntervalMs);
    this.timer.unref();
  }

  get size(): number {
    return this.live.size;
  }

  /** Tracks `client`, first dropping the connection idle longest when full; undefined when none is idle enough to drop. */
  admit(client: Duplex): TrackedConnection | undefined {
    if (this.live.size >= this.bounds.maxConnections) {
      const now = Date.now();
      let oldest: TrackedConnection | undefined;
      for (const tracked of this.live) if (!oldest || tracked.idleFor(now) > oldest.idleFor(now)) oldest = tracked;
      if (!oldest || oldest.idleFor(now) < this.bounds.evictableIdleMs) return undefined;
      oldest.destroy();
    }
    const tracked = new TrackedConnection(client);
    this.live.add(tracked);
    tracked.whenClosed(() => {
      this.live.delete(tracked);
      if (this.live.size === 0) for (const resolve of [...this.emptyWaiters]) resolve();
    });
    return tracked;
  }

  /** Settles once no connection is held (at once when none is), or when `signal` aborts. */
  whenEmpty(signal: AbortSignal): Promise<void> {
    if (this.live.size === 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.emptyWaiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.emptyWaiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Closes connections idle past idleTimeoutMs or older than lifetimeMs. */
  sweep(now: number): void {
    for (const tracked of this.live) {
      if (tracked.idleFor(now) >= this.bounds.idleTimeoutMs || now - tracked.startedAt >= this.bounds.lifetimeMs) tracked.destroy();
    }
  }

  /** Stops the sweep and closes every connection. */
  close(): void {
    clearInterval(this.timer);
    for (const tracked of [...this.live]) tracked.destroy();
    for (const resolve of [...this.emptyWaiters]) resolve();
  }
}
