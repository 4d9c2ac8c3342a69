/**
 * Host names and PATTERNs (N-1). A pattern is a host name (`api.github.com`), a wildcard for its
 * subdomains (`*.githubusercontent.com`: any depth, not the name itself), or an IP literal
 * (`10.0.0.5`, `::1`, `[::1]`), each with an optional `:PORT`. Names are compared in one form: the
 * WHATWG host parser's (lower case, IDN as punycode, numeric IPv4 forms such as `127.1` as dotted
 * IPv4), without a trailing dot, IPv6 in RFC 5952 form.
 */
import { domainToASCII } from "node:url";
import { formatIp, parseIp, type IpAddress } from "./addresses.js";
import { MAX_PATTERN_LENGTH } from "./limits.js";

/** The ports an entry without `:PORT` allows. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** A host a request names, in canonical form; `ip` when it is an IP literal. */
export interface Host {
  readonly name: string;
  readonly ip?: IpAddress;
}

export interface Pattern {
  /** The entry as the user wrote it. */
  readonly text: string;
  readonly kind: "name" | "subdomains" | "address";
  /** The canonical host, or for `subdomains` the suffix after `*.`. */
  readonly host: string;
  /** The port written, or undefined for none. */
  readonly port?: number;
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const MAX_HOST_NAME_LENGTH = 253;

/** The canonical form of a host name or IP literal (`[v6]` accepted), or undefined when it is neither. */
export function parseHost(text: string): Host | undefined {
  const unbracketed = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const literal = parseIp(unbracketed);
  if (literal) return { name: formatIp(literal), ip: literal };
  if (unbracketed !== text) return undefined;
  const ascii = domainToASCII(text);
  const name = ascii.endsWith(".") ? ascii.slice(0, -1) : ascii;
  // The WHATWG parser turns numeric forms (127.1, 0x7f.1) into dotted IPv4.
  const parsed = parseIp(name);
  if (parsed) return { name: formatIp(parsed), ip: parsed };
  if (name.length === 0 || name.length > MAX_HOST_NAME_LENGTH) return undefined;
  const labels = name.split(".");
  if (!labels.every((label) => LABEL.test(label))) return undefined;
  // A last label of digits alone would be read as IPv4 by some clients and as a name by others.
  if (/^\d+$/.test(labels.at(-1)!)) return undefined;
  return { name };
}

/** A port number from its decimal text (1..65535), or undefined. */
export function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** Splits `host[:port]` (`[v6]:port` for an IPv6 literal with a port; a bare IPv6 literal has none). */
export function splitPort(text: string): { host: string; port?: string } {
  const bracketed = /^(\[[^\]]*\])(?::(.*))?$/.exec(text);
  if (bracketed) return bracketed[2] === undefined ? { host: bracketed[1]! } : { host: bracketed[1]!, port: bracketed[2] };
  const colons = text.split(":").length - 1;
  if (colons !== 1) return { host: text };
  const at = text.lastIndexOf(":");
  return { host: text.slice(0, at), port: text.slice(at + 1) };
}

/** The pattern `text` writes, or the reason it is not one (a sentence naming the value). */
export function parsePattern(text: string): Pattern | string {
  if (text.length > MAX_PATTERN_LENGTH) return `is ${text.length} characters; a pattern is at most ${MAX_PATTERN_LENGTH} (MAX_PATTERN_LENGTH)`;
  const url = /^[a-z][a-z0-9+.-]*:\/\/([^/:?#]*)/i.exec(text.trim());
  if (url) return `${JSON.stringify(text)} is a URL; write the host alone, as in ${url[1] || "pypi.org"}`;
  const split = splitPort(text.trim());
  let port: number | undefined;
  if (split.port !== undefined) {
    port = parsePort(split.port);
    if (port === undefined) return `${JSON.stringify(text)} has port ${JSON.stringify(split.port)}; a port is a number from 1 to 65535`;
  }
  const withPort = port === undefined ? {} : { port };
  if (split.host.startsWith("*.")) {
    const suffix = parseHost(split.host.slice(2));
    if (!suffix || suffix.ip) return `${JSON.stringify(text)} is not a wildcard pattern; write *. followed by a host name, as in *.githubusercontent.com`;
    return { text, kind: "subdomains", host: suffix.name, ...withPort };
  }
  if (split.host.includes("*")) return `${JSON.stringify(text)} has a * that is not a leading *.; only *.NAME (every subdomain of NAME) is a wildcard`;
  const host = parseHost(split.host);
  if (!host) return `${JSON.stringify(text)} is not a host name or IP address (with an optional :PORT, [IPv6]:PORT for an IPv6 address)`;
  return { text, kind: host.ip ? "address" : "name", host: host.name, ...withPort };
}

/** Whether `pattern` names `host` (ports aside). */
export function matchesHost(pattern: Pattern, host: Host): boolean {
  if (pattern.kind === "subdomains") return !host.ip && host.name.endsWith(`.${pattern.host}`);
  return pattern.host === host.name;
}

/** Whether `pattern` covers `port`: its own port, or else `unwritten` (DEFAULT_PORTS for allow, every port for deny). */
export function matchesPort(pattern: Pattern, port: number, unwritten: readonly number[] | "any"): boolean {
  if (pattern.port !== undefined) return pattern.port === port;
  return unwritten === "any" || unwritten.includes(port);
}

/** `host` as a pattern for `port`: bare for a default port unless `withPort`, else `name:port` (`[v6]:port`). */
export function hostForPattern(host: Host, port: number, withPort = false): string {
  if (DEFAULT_PORTS.includes(port) && !withPort) return host.name;
  return `${host.ip?.family === 6 ? `[${host.name}]` : host.name}:${port}`;
}
