/**
 * `@jupyterlab/services` and `ws`, loaded the first time a message is built or a remote server is
 * reached rather than when a module imports them: the kernel domain's index is imported by every
 * process that reads settings (they name the kernel's), and `albedo --version` or `albedo skills
 * list` never talks to a kernel. Both are CommonJS, so a synchronous require serves the code that
 * builds a message.
 */
import { createRequire } from "node:module";
import type * as Services from "@jupyterlab/services";
import type WebSocket from "ws";
import type { WebSocketServer } from "ws";

const require = createRequire(import.meta.url);
let services: typeof Services | undefined;
/** What `require("ws")` returns: the WebSocket class, with the server class on it. */
type WsModule = typeof WebSocket & { readonly WebSocketServer: typeof WebSocketServer };
let ws: WsModule | undefined;

/** The `@jupyterlab/services` module; loads it on the first call. */
export function jupyterServices(): typeof Services {
  services ??= require("@jupyterlab/services") as typeof Services;
  return services;
}

/** The `ws` module (its WebSocket class, with WebSocketServer on it); loads it on the first call. */
export function wsModule(): WsModule {
  ws ??= require("ws") as WsModule;
  return ws;
}
