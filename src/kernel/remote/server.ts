/**
 * How albedo talks to a Jupyter Server: `@jupyterlab/services` settings whose REST calls and
 * WebSocket both carry the token in an `Authorization` header (`appendToken: false`: the default
 * puts it in the WebSocket URL, and Enterprise Gateway logs URLs at INFO), with named deadlines.
 * The server is not trusted: REST answers are read through boundedFetch.
 */
import { ServerConnection } from "@jupyterlab/services";
import WebSocket from "ws";
import { REMOTE_WS_HANDSHAKE_TIMEOUT_MS } from "./limits.js";
import { boundedFetch } from "./rest.js";
import type { RemoteKernelOptions } from "./settings.js";

/** Services settings for `options.url`; the token travels only in headers. */
export function serverSettings(options: Pick<RemoteKernelOptions, "url" | "token">): ServerConnection.ISettings {
  const headers: Record<string, string> = options.token ? { Authorization: `token ${options.token}` } : {};
  class AuthorizedWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { headers, handshakeTimeout: REMOTE_WS_HANDSHAKE_TIMEOUT_MS, perMessageDeflate: false });
    }
  }
  return ServerConnection.makeSettings({
    baseUrl: options.url,
    wsUrl: `ws${options.url.slice(4)}`,
    token: options.token,
    appendToken: false,
    WebSocket: AuthorizedWebSocket as unknown as typeof globalThis.WebSocket,
    fetch: boundedFetch([options.token]),
  });
}
