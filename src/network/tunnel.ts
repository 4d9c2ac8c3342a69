/**
 * A CONNECT through the proxy: the authority checked against its Host header, the policy current
 * now asked, the name resolved and checked, then either a byte tunnel to the checked address or,
 * for a host that carries secrets, the intercepted tunnel (intercept.ts).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { answerRaw, ESTABLISHED } from "./answers.js";
import type { TrackedConnection } from "./connections.js";
import { recordRefusal, headProblem, type ProxyContext } from "./context.js";
import { intercept } from "./intercept.js";
import { Exchange } from "./record.js";
import { connectOrFail, routeOrRefuse } from "./route.js";
import { connectTarget, hostHeaderProblem } from "./target.js";

/** Answers one CONNECT: a tunnel, an intercepted tunnel, or a one-line refusal. */
export async function openTunnel(context: ProxyContext, req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
  const tracked = context.connectionOf(client);
  if (!tracked) return void client.destroy();
  tracked.touch();
  const tooBig = headProblem(context, req);
  if (tooBig) return refuse(context, client, tooBig.status, tooBig.line, { host: "", port: 0 });
  const target = connectTarget(req.url ?? "");
  if (typeof target === "string") return refuse(context, client, 400, `albedo: ${target}`, { host: "", port: 0 });
  const where = { host: target.host.name, port: target.port };
  const mismatch = hostHeaderProblem(req.headers.host, target, target.port);
  if (mismatch) return refuse(context, client, 400, `albedo: ${mismatch}; refused`, where);
  const policy = context.policy();
  const secrets = policy.secretsFor(target.host);
  const exchange = new Exchange(context.onRecord, context.log, { ...where, method: "CONNECT", intercepted: secrets !== undefined });
  const reply = (status: 403 | 502, line: string) => answerRaw(client, status, line);
  const route = await routeOrRefuse(policy, context, target, exchange, reply);
  if (!route) return;
  if (secrets) return intercept(context, { tracked, client, head, route, secrets, upstreamCa: policy.upstreamCa, exchange });
  const upstream = await connectOrFail(route, context, exchange, reply);
  if (!upstream) return;
  tracked.whenClosed(() => {
    // The upstream socket's own counters: what went up (the head read with the CONNECT included) and came down.
    exchange.bytesUp = upstream.bytesWritten;
    exchange.bytesDown = upstream.bytesRead;
    exchange.finish();
  });
  tracked.own(upstream);
  client.write(ESTABLISHED);
  if (head.length > 0) upstream.write(head);
  splice(client, upstream, tracked);
}

/** Pipes bytes both ways; ends when the upstream has closed and the client has its last byte. */
function splice(client: Duplex, upstream: Duplex, tracked: TrackedConnection): void {
  client.pipe(upstream);
  upstream.pipe(client);
  // Once the upstream is gone, the client gets what is left and the connection ends: an unpiped
  // client socket is paused, and would never read the end of its own side.
  upstream.once("close", () => {
    if (client.writableFinished) tracked.destroy();
    else client.end(() => tracked.destroy());
  });
}

function refuse(context: ProxyContext, client: Duplex, status: 400 | 414 | 431, line: string, where: { host: string; port: number }): void {
  recordRefusal(context, line.replace(/^albedo: /, ""), { ...where, method: "CONNECT" });
  answerRaw(client, status, line);
}
