/**
 * The WebSocket class services opens a remote kernel's connection with (K-12, B). The token goes in
 * a header, a message is bounded by MAX_REMOTE_FRAME_BYTES, and the socket's events run in a try:
 * a frame services' handler cannot take (decodeFrame threw), a frame over the bound or any other
 * break of the WebSocket protocol ends this connection through `onRefused`, with a reason, instead
 * of reaching the process as an uncaught exception. Once refused the socket delivers nothing more.
 */
import type WebSocket from "ws";
import { wsModule } from "../packages.js";
import { humanSize } from "../../json/index.js";
import { RemoteFrameError } from "./frames.js";
import { MAX_REMOTE_FRAME_BYTES, REMOTE_WS_HANDSHAKE_TIMEOUT_MS } from "./limits.js";

/** Called once per socket with why the server's frames cannot be read; the connection must end (not reconnect). */
export type RefuseServer = (reason: string) => void;

/** What a kernel connection hears from each of its sockets. */
export interface SocketHooks {
  readonly onRefused: RefuseServer;
  /** The socket failed before it opened (an HTTP answer other than 101, a refused or timed-out handshake; not a subprotocol the server did not choose), with why; services then tries again. */
  readonly onHandshakeFailed?: (reason: string) => void;
}

/** ws's code for a message over maxPayload; its other receiver codes (WS_ERR_*) are other breaks of the protocol. */
const OVERSIZED = "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH";

/** What services constructs its socket with. */
export type SocketClass = new (address: string | URL, protocols?: string | string[]) => WebSocket;

/** A ws WebSocket subclass for services' `WebSocket` setting: sends `headers`, bounds and guards what it receives. */
export function guardedWebSocket(headers: Readonly<Record<string, string>>, hooks: SocketHooks): SocketClass {
  return class GuardedWebSocket extends wsModule() {
    private refused = false;
    private opened = false;

    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, {
        headers: { ...headers }, handshakeTimeout: REMOTE_WS_HANDSHAKE_TIMEOUT_MS, perMessageDeflate: false, maxPayload: MAX_REMOTE_FRAME_BYTES,
      });
    }

    // ws delivers every event through emit: the one place a listener's throw can be caught.
    override emit(event: string | symbol, ...args: unknown[]): boolean {
      if (this.refused && event === "message") return false;
      if (event === "open") this.opened = true;
      const violation = event === "error" ? protocolViolation(args[0]) : undefined;
      if (violation !== undefined) return this.refuse(violation);
      const failed = event === "error" && !this.opened ? handshakeProblem(args[0]) : undefined;
      if (failed !== undefined) hooks.onHandshakeFailed?.(failed);
      try {
        return super.emit(event, ...args);
      } catch (error) {
        return this.refuse(frameProblem(error));
      }
    }

    private refuse(reason: string): boolean {
      if (this.refused) return true;
      this.refused = true;
      hooks.onRefused(reason);
      this.terminate();
      return true;
    }
  };
}

/** Why ws's receiver gave up on the server's bytes, or undefined for an error that is not the server breaking the protocol. */
function protocolViolation(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string" || !code.startsWith("WS_ERR_")) return undefined;
  if (code === OVERSIZED) return `a WebSocket message larger than MAX_REMOTE_FRAME_BYTES (${humanSize(MAX_REMOTE_FRAME_BYTES)})`;
  return `a frame that breaks the WebSocket protocol (${code})`;
}

/**
 * ws's words for a failed opening handshake ("Unexpected server response: 403", "Opening handshake
 * has timed out", a connection error's code), or undefined for a subprotocol the server did not
 * choose: services then tries again without one, the legacy framing (Enterprise Gateway).
 */
function handshakeProblem(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes("subprotocol")) return undefined;
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}

function frameProblem(error: unknown): string {
  if (error instanceof RemoteFrameError) return error.reason;
  // Not albedo's decoder: services' own checks, whose words name a field, not the frame's text.
  return `a message services could not take (${error instanceof Error ? error.name : "a throw"})`;
}
