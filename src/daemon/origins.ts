/**
 * Which Host and Origin a request to a browser-reachable route may carry (DNS rebinding): a page
 * on another site can make a browser send requests to 127.0.0.1, but only with its own Origin, and
 * a rebound name puts that name in Host. A request over a Unix socket cannot come from a browser.
 */
import type { IncomingMessage } from "node:http";
import { HttpProblem } from "./problem.js";

/** Names a local client reaches the daemon by: loopback only. */
const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"] as const;

/** The Host values a request on this TCP port may carry (a loopback name, or the address it came in on); none are checked over a Unix socket (undefined). */
function allowedHosts(req: IncomingMessage): readonly string[] | undefined {
  const { localPort: port, localAddress: address } = req.socket;
  if (port === undefined) return undefined;
  const names = new Set<string>(LOOPBACK_NAMES);
  if (address !== undefined) names.add(address.includes(":") ? `[${address}]` : address);
  return [...names].map((name) => `${name}:${port}`);
}

/**
 * Throws 403 origin_not_allowed unless Host names the daemon by a loopback name and port, and an
 * Origin, when sent, is the daemon's own (http on a loopback name and this port). Clients that are
 * not browsers send no Origin.
 */
export function checkLocalOrigin(req: IncomingMessage): void {
  const hosts = allowedHosts(req);
  const host = req.headers.host;
  if (hosts !== undefined && (host === undefined || !hosts.includes(host.toLowerCase()))) {
    throw new HttpProblem("origin_not_allowed", `Host ${JSON.stringify(host ?? "")} is not this daemon; reach it as ${hosts[0]}`);
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const allowed = hosts?.map((name) => `http://${name}`) ?? [];
  if (!allowed.includes(origin.toLowerCase())) {
    throw new HttpProblem("origin_not_allowed", `requests from ${JSON.stringify(origin.slice(0, 200))} are refused: only the daemon's own origin may send them`);
  }
}
