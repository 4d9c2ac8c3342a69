/**
 * How albedo talks to a Jupyter Server: `@jupyterlab/services` settings whose REST calls and
 * WebSocket both carry the token in an `Authorization` header (`appendToken: false`: the default
 * puts it in the WebSocket URL, and Enterprise Gateway logs URLs at INFO), with named deadlines.
 * The server is not trusted: REST answers are read through boundedFetch, WebSocket frames are
 * decoded by decodeFrame on a guarded socket, so nothing it sends can end the process.
 */
import type { ServerConnection } from "@jupyterlab/services";
import { jupyterServices } from "../packages.js";
import { decodeFrame } from "./frames.js";
import { boundedFetch } from "./rest.js";
import type { RemoteKernelOptions } from "./settings.js";
import { guardedWebSocket, type SocketHooks } from "./socket.js";

/**
 * Services settings for `options.url`; the token travels only in headers. `hooks.onRefused` hears,
 * once per WebSocket, that the server sent what albedo cannot read: the caller ends that kernel
 * connection; `hooks.onHandshakeFailed` hears of a WebSocket that never opened.
 */
export function serverSettings(options: Pick<RemoteKernelOptions, "url" | "token">, hooks: SocketHooks = { onRefused: () => undefined }): ServerConnection.ISettings {
  const headers: Record<string, string> = options.token ? { Authorization: `token ${options.token}` } : {};
  const { ServerConnection } = jupyterServices();
  const defaults = ServerConnection.makeSettings();
  return ServerConnection.makeSettings({
    baseUrl: options.url,
    wsUrl: `ws${options.url.slice(4)}`,
    token: options.token,
    appendToken: false,
    WebSocket: guardedWebSocket(headers, hooks) as unknown as typeof globalThis.WebSocket,
    fetch: boundedFetch([options.token]),
    serializer: { serialize: defaults.serializer.serialize, deserialize: decodeFrame },
  });
}
