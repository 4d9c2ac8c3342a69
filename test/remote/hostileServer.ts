/**
 * A Jupyter Server not to be trusted, on loopback, for the tests of the remote boundary (K-12, B).
 * It speaks the protocol by relaying REST calls and kernel WebSockets to a real server (so a session
 * opens through it as through any server), and misbehaves on cue: a route the test answers itself,
 * a frame of the test's choosing sent to the client among a kernel's own traffic.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import WebSocket, { WebSocketServer } from "ws";

/** The binary framing Jupyter Server 2 speaks when the client offers it. */
export const V1_PROTOCOL = "v1.kernel.websocket.jupyter.org";

/** How the relay frames kernel messages towards the client: v1 (binary), or legacy JSON text (as Enterprise Gateway). */
export type Framing = "v1" | "legacy";

export type Answer = (req: IncomingMessage, res: ServerResponse) => void;
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex) => void;

/** One WebSocket frame the relay sends on its own. */
export interface Frame {
  readonly data: string | Buffer;
  readonly binary: boolean;
}

export interface HostileServer {
  readonly url: string;
  /** Answers `method` on paths matching `path` (query left out) with `answer` instead of relaying; replaces an earlier one. */
  answer(method: string, path: RegExp, answer: Answer): void;
  /** Client kernel WebSockets open now. */
  openSockets(): number;
  /** The kernel ids clients opened WebSockets to, in order. */
  readonly kernels: readonly string[];
  /** Whether a frame from the real server containing `marker` went to a client. */
  relayed(marker: string): boolean;
  /** Sends one frame to every open client WebSocket. */
  attack(data: string | Buffer, binary: boolean): void;
  /** Sends this frame first on every client WebSocket opened from now on (undefined: none). */
  attackOnOpen(frame: Frame | undefined): void;
  /** Answers every WebSocket upgrade from now on with `handler` instead of relaying it (undefined: relay again). */
  onUpgrade(handler: UpgradeHandler | undefined): void;
  close(): Promise<void>;
}

/** Starts the relay in front of `upstream` (none: every route not answered is a 404). */
export async function hostileServer(upstream: URL | undefined, framing: Framing = "v1"): Promise<HostileServer> {
  const answers = new Map<string, { path: RegExp; answer: Answer }>();
  const clients = new Set<WebSocket>();
  const kernels: string[] = [];
  const seen: Buffer[] = [];
  let first: Frame | undefined;
  let upgrading: UpgradeHandler | undefined;
  const sockets = new WebSocketServer({
    noServer: true, perMessageDeflate: false,
    handleProtocols: (offered) => (framing === "v1" && offered.has(V1_PROTOCOL) ? V1_PROTOCOL : false),
  });
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://relay").pathname;
    const own = answers.get(req.method ?? "GET");
    if (own !== undefined && own.path.test(path)) own.answer(req, res);
    else if (upstream !== undefined) forward(upstream, req, res);
    else res.writeHead(404).end();
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (upgrading !== undefined) return upgrading(req, socket);
    if (upstream === undefined) return void socket.destroy();
    const kernel = /\/api\/kernels\/([^/]+)\/channels/.exec(req.url ?? "")?.[1];
    if (kernel !== undefined) kernels.push(kernel);
    const far = new WebSocket(`ws://${upstream.host}${req.url ?? "/"}`, framing === "v1" ? [V1_PROTOCOL] : [], {
      headers: req.headers.authorization ? { authorization: req.headers.authorization } : {}, perMessageDeflate: false,
    });
    far.once("error", () => socket.destroy());
    far.once("open", () => sockets.handleUpgrade(req, socket, head, (near) => {
      clients.add(near);
      const end = () => (near.terminate(), far.terminate(), clients.delete(near));
      near.on("close", end).on("error", end);
      far.on("close", end).on("error", end);
      near.on("message", (data, binary) => far.readyState === WebSocket.OPEN && far.send(data as Buffer, { binary }));
      far.on("message", (data, binary) => {
        seen.push(data as Buffer);
        if (near.readyState === WebSocket.OPEN) near.send(data as Buffer, { binary });
      });
      if (first !== undefined) near.send(first.data, { binary: first.binary });
    }));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    kernels,
    answer: (method, path, answer) => void answers.set(method, { path, answer }),
    openSockets: () => clients.size,
    attackOnOpen: (frame) => void (first = frame),
    onUpgrade: (handler) => void (upgrading = handler),
    relayed: (marker) => seen.some((frame) => frame.includes(marker)),
    attack: (data, binary) => {
      for (const client of clients) client.send(data, { binary });
    },
    close: async () => {
      for (const client of clients) client.terminate();
      sockets.close();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

function forward(upstream: URL, req: IncomingMessage, res: ServerResponse): void {
  const far = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  far.on("error", () => res.destroy());
  req.pipe(far);
}

/** Where streamBody pauses: after `atBytes` it calls `reached` and waits for `until`. */
export interface Hold {
  readonly atBytes: number;
  readonly reached: () => void;
  readonly until: Promise<void>;
}

/**
 * Streams `bytes` of body after `prefix` with the socket's back-pressure, so the test process never
 * holds them; stops when the client goes away. Resolves with how many bytes the socket took.
 */
export async function streamBody(res: ServerResponse, prefix: string, bytes: number, hold?: Hold): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  let gone = false;
  const closed = new Promise<void>((done) => res.once("close", () => ((gone = true), done())));
  let held = hold;
  res.write(prefix);
  while (!gone && sent < bytes) {
    if (held !== undefined && sent >= held.atBytes) {
      held.reached();
      await Promise.race([held.until, closed]);
      held = undefined;
      continue;
    }
    sent += chunk.length;
    if (!res.write(chunk)) await Promise.race([new Promise((done) => res.once("drain", done)), closed]);
  }
  if (!gone) res.end();
  return sent;
}
