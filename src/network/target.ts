/**
 * What a request asks the proxy for (N-2): a CONNECT authority (`host:port`), an absolute URI
 * (`http://host[:port]/path`), and the `Host` header that must agree with either. Hosts are
 * parsed as patterns are (patterns.ts), so a request and an allow entry name a host alike.
 */
import { hostForPattern as targetText, parseHost, parsePort, splitPort, type Host } from "./patterns.js";

export interface Target {
  readonly host: Host;
  readonly port: number;
  /** The origin-form path and query, for an absolute URI. */
  readonly path?: string;
}

/** Characters an authority never holds (user info, path, query, fragment, white space). */
const NOT_AUTHORITY = /[\s/?#@\\]/;

/** A CONNECT target `host:port` (`[v6]:port`), or the problem as words for a 400. */
export function connectTarget(authority: string): Target | string {
  const split = /^(.*):([^:\]]*)$/.exec(authority);
  const port = split ? parsePort(split[2]!) : undefined;
  if (!split || port === undefined) return `CONNECT needs host:port, got ${JSON.stringify(authority.slice(0, 100))}`;
  const host = NOT_AUTHORITY.test(split[1]!) ? undefined : parseHost(split[1]!);
  if (!host) return `${JSON.stringify(split[1]!.slice(0, 100))} is not a host name or IP address`;
  return { host, port };
}

/** An absolute `http://` request target, or the problem as words for a 400. */
export function absoluteTarget(target: string): Target | string {
  if (!/^http:\/\//i.test(target)) {
    if (/^https:\/\//i.test(target)) return "an https:// URL goes through CONNECT; set HTTPS_PROXY, not a plain request";
    return `this is a proxy: a request names an absolute http:// URL, got ${JSON.stringify(target.slice(0, 100))}`;
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `${JSON.stringify(target.slice(0, 100))} is not a URL`;
  }
  if (url.username !== "" || url.password !== "") return "a URL with a user name or password is refused";
  const host = parseHost(url.hostname);
  if (!host) return `${JSON.stringify(url.hostname.slice(0, 100))} is not a host name or IP address`;
  return { host, port: url.port === "" ? 80 : Number(url.port), path: `${url.pathname}${url.search}` };
}

/** Why a `Host` header disagrees with the target (another host, or a port other than the target's; none written means `defaultPort`), or undefined. */
export function hostHeaderProblem(header: string | undefined, target: Target, defaultPort: number): string | undefined {
  if (header === undefined) return undefined;
  const split = splitPort(header.trim());
  const host = parseHost(split.host);
  const port = split.port === undefined ? defaultPort : parsePort(split.port);
  if (host?.name === target.host.name && port === target.port) return undefined;
  return `the Host header ${JSON.stringify(header.slice(0, 100))} does not match the request target ${JSON.stringify(targetText(target.host, target.port))}`;
}
