/**
 * Heartbeat monitor (K-9): a REQ ping every HEARTBEAT_INTERVAL_MS; after HEARTBEAT_MISSES
 * consecutive unanswered pings the kernel counts as dead. A REQ socket that sent and got no reply
 * cannot send again, so a miss replaces the socket.
 */
import { zeromq, type Zeromq as zmq } from "../platform/index.js";
import { HEARTBEAT_INTERVAL_MS, HEARTBEAT_MISSES, MAX_HEARTBEAT_REPLY_BYTES } from "./limits.js";


export class Heartbeat {
  private socket: zmq.Request | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private misses = 0;

  constructor(private readonly address: string, private readonly onLost: (misses: number) => void) {}

  /** Starts pinging; `onLost` fires at most once. */
  start(): void {
    void this.loop();
  }

  /** Stops pinging and closes the socket; idempotent. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.closeSocket();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      const answered = await this.ping();
      if (this.stopped) return;
      this.misses = answered ? 0 : this.misses + 1;
      if (this.misses >= HEARTBEAT_MISSES) {
        this.stop();
        this.onLost(this.misses);
        return;
      }
      await this.sleep(Math.max(0, HEARTBEAT_INTERVAL_MS - (Date.now() - started)));
    }
  }

  private async ping(): Promise<boolean> {
    const socket = this.socket ?? this.openSocket();
    try {
      await socket.send("ping");
      await socket.receive();
      return true;
    } catch {
      this.closeSocket();
      return false;
    }
  }

  private openSocket(): zmq.Request {
    const socket = new (zeromq().Request)({ linger: 0, receiveTimeout: HEARTBEAT_INTERVAL_MS, sendTimeout: HEARTBEAT_INTERVAL_MS, maxMessageSize: MAX_HEARTBEAT_REPLY_BYTES });
    socket.connect(this.address);
    this.socket = socket;
    return socket;
  }

  private closeSocket(): void {
    this.socket?.close();
    this.socket = undefined;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.timer = setTimeout(resolve, ms);
    });
  }
}
