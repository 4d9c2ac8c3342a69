/**
 * The optional fast path of remote kernels (K-12): a WebSocket from the kernel back to the runtime,
 * carrying the same JSON-RPC as the comm without the Jupyter Server in between. One loopback
 * listener per address per process, shared by the sessions that use it; each session registers a
 * 256-bit token, and an upgrade is accepted only with a registered token (compared in constant
 * time). Off loopback the kernel dials wss:// to a TLS terminator that forwards here.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { wsModule } from "../packages.js";
import { CALLBACK_TOKEN_BYTES, CALLBACK_UNTRUSTED_TIMEOUT_MS, CALLBACK_MAX_FRAME_BYTES } from "./limits.js";
import type { Log } from "../../platform/index.js";

/** One session's place on a listener. */
export interface CallbackRegistration {
  /** The secret the kernel presents as `Authorization: Bearer …`. */
  readonly token: string;
  /** Stops accepting this token and closes its connection; the listener goes with its last registration. */
  close(): Promise<void>;
}

/** What the session does with a kernel that connected: `send` answers it; returns the handler for its frames. */
export type CallbackConnected = (send: (text: string) => void) => { receive(body: Buffer): void; closed(): void };

interface Entry {
  readonly token: Buffer;
  readonly connected: CallbackConnected;
  socket: WebSocket | undefined;
}

const listeners = new Map<string, Promise<CallbackListener>>();

/** Registers a session on the listener at host:port (started on first use); throws when the address cannot be bound. */
export async function registerCallback(host: string, port: number, connected: CallbackConnected, log: Log = () => undefined): Promise<CallbackRegistration> {
  const key = `${host}:${port}`;
  let listening = listeners.get(key);
  if (listening === undefined) {
    listening = CallbackListener.listen(host, port, log);
    listeners.set(key, listening);
    listening.catch(() => listeners.delete(key));
  }
  const listener = await listening;
  const token = randomBytes(CALLBACK_TOKEN_BYTES).toString("hex");
  listener.add(token, connected);
  return {
    token,
    close: async () => {
      if (listener.remove(token) === 0 && listeners.get(key) === listening) {
        listeners.delete(key);
        await listener.close();
      }
    },
  };
}

class CallbackListener {
  private readonly entries = new Map<string, Entry>();
  private readonly sockets = new (wsModule().WebSocketServer)({ noServer: true, maxPayload: CALLBACK_MAX_FRAME_BYTES, perMessageDeflate: false });

  private constructor(private readonly server: Server, private readonly log: Log) {
    server.on("upgrade", (request, socket, head) => this.upgrade(request, socket, head));
    server.on("request", (_request, response) => response.writeHead(404).end());
  }

  static listen(host: string, port: number, log: Log): Promise<CallbackListener> {
    // Timeouts are enforced by a periodic check; a short period makes the untrusted bound hold closely.
    const server = createServer({ connectionsCheckingInterval: CALLBACK_UNTRUSTED_TIMEOUT_MS / 5 });
    // A connection that does not upgrade with a token in time is dropped (it has no business here).
    server.requestTimeout = CALLBACK_UNTRUSTED_TIMEOUT_MS;
    server.headersTimeout = CALLBACK_UNTRUSTED_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve(new CallbackListener(server, log));
      });
    });
  }

  add(token: string, connected: CallbackConnected): void {
    this.entries.set(digest(token), { token: Buffer.from(token, "utf8"), connected, socket: undefined });
  }

  /** Removes a token and closes its connection; returns how many registrations are left. */
  remove(token: string): number {
    const key = digest(token);
    this.entries.get(key)?.socket?.terminate();
    this.entries.delete(key);
    return this.entries.size;
  }

  async close(): Promise<void> {
    for (const client of this.sockets.clients) client.terminate();
    this.sockets.close();
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const entry = this.find(request.headers.authorization);
    if (entry === undefined) {
      this.log("warn", "callback: refused a WebSocket without a valid token", { peer: request.socket.remoteAddress });
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    this.sockets.handleUpgrade(request, socket, head, (ws) => this.adopt(entry, ws));
  }

  /** The entry whose token the header carries. The map is keyed by the token's hash, so looking it up reveals nothing about the token; the bytes are then compared in constant time. */
  private find(header: string | undefined): Entry | undefined {
    const presented = /^Bearer (\S+)$/.exec(header ?? "")?.[1];
    if (presented === undefined) return undefined;
    const entry = this.entries.get(digest(presented));
    const given = Buffer.from(presented, "utf8");
    return entry !== undefined && entry.token.length === given.length && timingSafeEqual(entry.token, given) ? entry : undefined;
  }

  private adopt(entry: Entry, ws: WebSocket): void {
    // A restarted kernel connects again while its predecessor's socket may still be closing: the newcomer wins.
    entry.socket?.terminate();
    entry.socket = ws;
    const peer = entry.connected((text) => ws.readyState === ws.OPEN && ws.send(text));
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      peer.receive(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data));
    });
    ws.on("close", () => {
      if (entry.socket === ws) entry.socket = undefined;
      peer.closed();
    });
    ws.on("error", (error) => this.log("warn", "callback: socket error", { error: String(error) }));
  }
}

function digest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
