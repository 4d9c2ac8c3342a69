import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { outputDropMarker } from "../kernel/index.js";
import { boundJson } from "../json/index.js";
import { API, WEB_STREAM_PROTOCOL } from "../api/index.js";
import { authenticate, type ApiAuth } from "./http.js";
import { refuseSocket } from "./connections.js";
import { MAX_STREAM_BUFFER_BYTES, MAX_STREAM_CLIENTS, MAX_STREAM_MESSAGE_BYTES } from "./limits.js";
import { HttpProblem, problemOf } from "./problem.js";
import type { Router } from "./router.js";
import type { HostedSession, SessionDirectory, StreamEvent } from "./sessionPort.js";
import { streamMessage } from "./views.js";
import type { Log } from "../platform/index.js";

/** WebSocket close code sent when the session closes. */
export const STREAM_CLOSE_GOING_AWAY = 1001;

const STREAM_MARKER = outputDropMarker("MAX_STREAM_MESSAGE_BYTES", MAX_STREAM_MESSAGE_BYTES, "in one stream message");
/** Each event's message, made once however many clients a session has. */
const frames = new WeakMap<StreamEvent, Buffer>();

/** The message for `event` on `live`'s stream: its JSON (streamMessage), cut to MAX_STREAM_MESSAGE_BYTES with a marker when larger. */
export function streamFrame(live: HostedSession, event: StreamEvent): Buffer {
  let frame = frames.get(event);
  if (frame === undefined) {
    const message = streamMessage(live, event);
    frame = Buffer.from(JSON.stringify(message));
    if (frame.length > MAX_STREAM_MESSAGE_BYTES) frame = Buffer.from(JSON.stringify(boundJson(message, MAX_STREAM_MESSAGE_BYTES, STREAM_MARKER).value));
    frames.set(event, frame);
  }
  return frame;
}

/**
 * Sends every event of `live` to `ws`; a client whose queue would pass MAX_STREAM_BUFFER_BYTES
 * with the next message is dropped rather than buffered without bound.
 */
function attach(ws: WebSocket, live: HostedSession): void {
  const send = (event: StreamEvent) => {
    const frame = streamFrame(live, event);
    if (ws.bufferedAmount + frame.length > MAX_STREAM_BUFFER_BYTES) {
      ws.terminate();
      return;
    }
    ws.send(frame, { binary: false });
  };
  const subscription = live.subscribe(send);
  const closing = live.onClosed(() => ws.close(STREAM_CLOSE_GOING_AWAY, "session closed"));
  ws.on("close", () => {
    subscription.dispose();
    closing.dispose();
  });
  ws.on("error", () => ws.terminate());
  // Clients only listen; anything they send is ignored.
  ws.on("message", () => undefined);
  send({ type: "status", kernel: live.session.status().kernel, revision: live.session.view.snapshot.revision });
}

/** The WebSocket side of the daemon: the stream route of the API, authenticated like every route (and by `?token=`), Host and Origin checked. */
export class StreamServer {
  // The page offers its page secret as a second subprotocol; the one picked is always the stream's own.
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, handleProtocols: (offered) => (offered.has(WEB_STREAM_PROTOCOL) ? WEB_STREAM_PROTOCOL : false) });

  constructor(
    private readonly router: Router,
    private readonly sessions: SessionDirectory,
    private readonly auth: ApiAuth,
    private readonly log?: Log,
  ) {
    this.wss.on("error", (error) => this.log?.("debug", `stream server error: ${error.message}`));
  }

  /** Handles one HTTP upgrade request; a refusal is a problem document on the socket, and a peer that resets only loses its own socket. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // The HTTP server hands the socket over without its error listener; an unhandled reset would end the process.
    socket.on("error", (error: NodeJS.ErrnoException) => {
      this.log?.("debug", `stream upgrade socket error: ${error.code ?? error.message}`);
      socket.destroy();
    });
    try {
      const url = new URL(req.url ?? "/", "http://albedo.invalid");
      // A browser's upgrade always carries Origin, so a web login without one is not the console's.
      authenticate(req, url, this.auth, true);
      const { route, params } = this.router.match(req.method ?? "GET", url.pathname);
      if (route.spec !== API.stream) throw new HttpProblem("route_not_found", `no stream at ${url.pathname}; streams live at /sessions/{id}/stream`);
      const live = this.sessions.get(params.id!);
      if (live.subscribers >= MAX_STREAM_CLIENTS) {
        throw new HttpProblem("too_many_streams", `session ${live.id} already has ${live.subscribers} stream clients; at most ${MAX_STREAM_CLIENTS} (MAX_STREAM_CLIENTS)`, {
          limit: MAX_STREAM_CLIENTS,
        });
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => attach(ws, live));
    } catch (error) {
      refuseSocket(socket, problemOf(error));
    }
  }

  /** Ends every stream connection. */
  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }
}
