/**
 * One HTTP exchange relayed through the proxy, for a forwarded plain-HTTP request and for a
 * request inside an intercepted tunnel alike: the client's body up, the upstream's head and body
 * down, the bodies' bytes counted, the record finished once.
 */
import type { ClientRequest, IncomingMessage, ServerResponse } from "node:http";
import { answer } from "./answers.js";
import type { TrackedConnection } from "./connections.js";
import { responseHeaders } from "./headers.js";
import type { Exchange } from "./record.js";

/** Pipes `req` into `outgoing` and the response back into `res`; `failure` words an upstream error as a 502 line. */
export function relayExchange(req: IncomingMessage, res: ServerResponse, outgoing: ClientRequest, exchange: Exchange, tracked: TrackedConnection, failure: (why: string) => string): void {
  outgoing.on("socket", (socket) => tracked.own(socket));
  req.on("data", (chunk: Buffer) => (exchange.bytesUp += chunk.length));
  req.pipe(outgoing);
  outgoing.on("response", (incoming: IncomingMessage) => {
    tracked.touch();
    try {
      res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, responseHeaders(incoming.rawHeaders));
    } catch (error) {
      exchange.fail(`the upstream's response head cannot be forwarded (${error instanceof Error ? error.message : String(error)})`);
      incoming.destroy();
      answer(res, 502, failure("its response head cannot be forwarded"));
      return;
    }
    incoming.on("data", (chunk: Buffer) => (exchange.bytesDown += chunk.length));
    incoming.on("aborted", () => res.destroy());
    incoming.on("error", () => res.destroy());
    incoming.pipe(res);
  });
  outgoing.on("error", (error: NodeJS.ErrnoException) => {
    const why = upstreamError(error);
    exchange.fail(why);
    answer(res, 502, failure(why));
  });
  res.on("close", () => {
    if (!res.writableFinished) {
      exchange.fail(exchange.bytesDown > 0 || res.headersSent ? "the connection closed before the response was complete" : "the client went away");
      outgoing.destroy();
    }
    exchange.finish();
  });
}

/** An upstream failure in words: a certificate problem says so. */
export function upstreamError(error: NodeJS.ErrnoException): string {
  const code = error.code ?? "";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return `its certificate is for another name (${code})`;
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return `its certificate is not trusted (${code}); name its CA in network.upstream_ca`;
  return code !== "" ? `${code}: ${error.message}` : error.message;
}
