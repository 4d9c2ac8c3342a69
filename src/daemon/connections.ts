import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { presentedToken, tokenMatches } from "./auth.js";
import type { ApiAuth } from "./http.js";
import { checkWebLogin } from "./webLogins.js";
import { MAX_CONNECTIONS, MAX_CONNECTIONS_PER_PEER, REFUSAL_FLUSH_TIMEOUT_MS, UNTRUSTED_CONNECTION_TIMEOUT_MS } from "./limits.js";
import { HttpProblem, problemResponse } from "./problem.js";
import type { Log } from "../platform/index.js";

/** Peer key of connections without an address (a Unix socket): they count as one peer. */
const LOCAL_PEER = "unix";

interface Tracked {
  readonly peer: string;
  trusted: boolean;
  readonly timer: NodeJS.Timeout;
}

/**
 * Writes `response` and closes the socket for good once it is flushed, or after
 * REFUSAL_FLUSH_TIMEOUT_MS. Ending alone is not enough: the HTTP server's sockets allow half-open
 * connections, so a peer that never closes its side would hold the descriptor forever.
 */
export function closeWith(socket: Duplex, response: string): void {
  const timer = setTimeout(() => socket.destroy(), REFUSAL_FLUSH_TIMEOUT_MS);
  timer.unref();
  socket.end(response, () => {
    clearTimeout(timer);
    socket.destroy();
  });
}

/** Answers a raw socket (no HTTP response object) with a problem document, then closes it (closeWith). */
export function refuseSocket(socket: Duplex, problem: HttpProblem): void {
  closeWith(socket, problemResponse(problem));
}

/**
 * Keeps local clients without the token from holding the daemon's descriptors (D-1, B). Every
 * connection is untrusted until it sends a request or upgrade carrying the token. An untrusted one
 * is destroyed after UNTRUSTED_CONNECTION_TIMEOUT_MS, and is the first to go (503
 * too_many_connections) when a new connection would pass MAX_CONNECTIONS or
 * MAX_CONNECTIONS_PER_PEER; so idle sockets cannot lock out a client that has the token. Only when
 * every connection in the way is trusted is the new one refused instead.
 */
export class ConnectionGuard {
  /** Open connections, oldest first (a Map keeps insertion order). */
  private readonly open = new Map<Socket, Tracked>();
  private readonly perPeer = new Map<string, number>();

  constructor(
    private readonly auth: ApiAuth,
    private readonly log?: Log,
  ) {}

  /** Watches `server`'s connections, requests and upgrades, and answers its broken requests. */
  attach(server: Server): void {
    server.on("connection", (socket: Socket) => this.admit(socket));
    server.on("request", (req: IncomingMessage) => this.sawRequest(req, false));
    server.on("upgrade", (req: IncomingMessage) => this.sawRequest(req, true));
    // A malformed, timed-out or reset request ends only its own socket (and frees its descriptor).
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
      this.log?.("debug", `client connection error: ${error.code ?? error.message}`);
      if (error.code === "ECONNRESET" || !socket.writable) socket.destroy();
      else if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") refuseSocket(socket, new HttpProblem("request_timeout", "the request did not arrive in time"));
      else refuseSocket(socket, new HttpProblem("bad_request", `the request is not well-formed HTTP (${error.code ?? error.message})`));
    });
    server.on("error", (error) => this.log?.("error", `server error: ${error.message}`));
  }

  private admit(socket: Socket): void {
    const peer = socket.remoteAddress ?? LOCAL_PEER;
    if (!this.makeRoom(peer)) {
      this.log?.("warn", "refused a connection: every connection in the way sent the token", { peer, open: this.open.size });
      refuseSocket(socket, tooMany());
      return;
    }
    const timer = setTimeout(() => this.expire(socket), UNTRUSTED_CONNECTION_TIMEOUT_MS);
    timer.unref();
    this.open.set(socket, { peer, trusted: false, timer });
    this.perPeer.set(peer, (this.perPeer.get(peer) ?? 0) + 1);
    socket.once("close", () => this.forget(socket));
  }

  /** Closes the oldest untrusted connections until `peer` may open one more; false when only trusted ones are in the way. */
  private makeRoom(peer: string): boolean {
    for (;;) {
      const peerFull = (this.perPeer.get(peer) ?? 0) >= MAX_CONNECTIONS_PER_PEER;
      if (!peerFull && this.open.size < MAX_CONNECTIONS) return true;
      const victim = this.oldestUntrusted(peerFull ? peer : undefined);
      if (victim === undefined) return false;
      this.forget(victim);
      refuseSocket(victim, tooMany());
    }
  }

  private oldestUntrusted(peer: string | undefined): Socket | undefined {
    for (const [socket, tracked] of this.open) if (!tracked.trusted && (peer === undefined || tracked.peer === peer)) return socket;
    return undefined;
  }

  /** A request or upgrade with the token, or a web console login (page secret and cookie), makes its connection trusted: no deadline, never closed to make room. */
  private sawRequest(req: IncomingMessage, upgrade: boolean): void {
    const tracked = this.open.get(req.socket);
    if (tracked === undefined || tracked.trusted) return;
    const url = new URL(req.url ?? "/", "http://albedo.invalid");
    if (!tokenMatches(presentedToken(req, url, upgrade), this.auth.token) && checkWebLogin(req, this.auth.web) !== "login") return;
    tracked.trusted = true;
    clearTimeout(tracked.timer);
  }

  private expire(socket: Socket): void {
    if (this.open.get(socket)?.trusted !== false) return;
    this.forget(socket);
    socket.destroy();
  }

  private forget(socket: Socket): void {
    const tracked = this.open.get(socket);
    if (tracked === undefined) return;
    this.open.delete(socket);
    clearTimeout(tracked.timer);
    const left = (this.perPeer.get(tracked.peer) ?? 1) - 1;
    if (left > 0) this.perPeer.set(tracked.peer, left);
    else this.perPeer.delete(tracked.peer);
  }
}

function tooMany(): HttpProblem {
  return new HttpProblem(
    "too_many_connections",
    `the daemon holds ${MAX_CONNECTIONS} connections (MAX_CONNECTIONS), at most ${MAX_CONNECTIONS_PER_PEER} from one peer (MAX_CONNECTIONS_PER_PEER); connections that have not sent the token are closed first`,
    { limit: MAX_CONNECTIONS_PER_PEER },
  );
}
