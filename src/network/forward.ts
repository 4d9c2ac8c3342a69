/**
 * A plain-HTTP request through the proxy (`GET http://host/path`): the target checked against
 * its Host header, the policy current now asked, the name resolved and checked, then the request
 * sent in origin form over a new connection to the checked address. Each request is decided and
 * recorded alone, so a keep-alive client cannot carry a second host on the first one's decision.
 */
import { request, type IncomingMessage, type ServerResponse } from "node:http";
import { answer } from "./answers.js";
import { recordRefusal, headProblem, type ProxyContext } from "./context.js";
import { requestHeaders } from "./headers.js";
import { MAX_RESPONSE_HEADER_BYTES } from "./limits.js";
import { Exchange } from "./record.js";
import { relayExchange } from "./relay.js";
import { connectOrFail, routeOrRefuse, unreachable } from "./route.js";
import { absoluteTarget, hostHeaderProblem } from "./target.js";

/** Answers one absolute-URI request: forwarded, or refused with a one-line 4xx/5xx. */
export async function forwardRequest(context: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const tracked = context.connectionOf(req.socket);
  if (!tracked) return void res.destroy();
  tracked.touch();
  const method = req.method ?? "GET";
  const tooBig = headProblem(context, req);
  if (tooBig) return refuse(context, res, tooBig.status, tooBig.line, { host: "", port: 0, method });
  const target = absoluteTarget(req.url ?? "");
  if (typeof target === "string") return refuse(context, res, 400, `albedo: ${target}`, { host: "", port: 0, method });
  const where = { host: target.host.name, port: target.port, method };
  const mismatch = hostHeaderProblem(req.headers.host, target, 80);
  if (mismatch) return refuse(context, res, 400, `albedo: ${mismatch}; refused`, where);
  const exchange = new Exchange(context.onRecord, context.log, { ...where, path: target.path! });
  const reply = (status: 403 | 502, line: string) => answer(res, status, line);
  const route = await routeOrRefuse(context.policy(), context, target, exchange, reply);
  const socket = route && (await connectOrFail(route, context, exchange, reply));
  if (!socket) return;
  tracked.own(socket);
  const outgoing = request({
    // No agent: with one, Node would ignore createConnection and resolve a host itself.
    createConnection: () => socket,
    method,
    path: target.path!,
    headers: requestHeaders(req.rawHeaders),
    setHost: false,
    maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
  });
  relayExchange(req, res, outgoing, exchange, tracked, (why) => unreachable(target.host, target.port, why).line);
  res.on("close", () => socket.destroy());
}

function refuse(context: ProxyContext, res: ServerResponse, status: 400 | 414 | 431, line: string, where: { host: string; port: number; method: string }): void {
  recordRefusal(context, line.replace(/^albedo: /, ""), where);
  answer(res, status, line);
}
