/**
 * IP addresses as the proxy sees them: parsed to bytes, written in one canonical form (so a
 * pattern and a request name the same address the same way), and classed as public or as one
 * of the internal kinds a kernel must not reach through a name (N-2). IPv6 forms that carry an
 * IPv4 address (IPv4-mapped, NAT64, 6to4) are classed by the address they carry.
 */
import { isIPv4, isIPv6 } from "node:net";

export interface IpAddress {
  readonly family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array;
}

/** What an address is; everything but "public" is refused unless an exact allow entry names the host and port. */
export type AddressKind =
  | "public"
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "cgnat"
  | "multicast"
  | "broadcast"
  | "documentation"
  | "benchmarking"
  | "reserved";

export interface AddressClass {
  readonly kind: AddressKind;
  /** For an IPv6 address carrying an IPv4 one: which form, the class being that IPv4 address's. */
  readonly via?: "IPv4-mapped" | "NAT64" | "6to4";
}

/** One range: its bytes, prefix length and kind. */
interface Range {
  readonly net: Uint8Array;
  readonly prefix: number;
  readonly kind: AddressKind;
}

const range = (cidr: string, kind: AddressKind): Range => {
  const [address, prefix] = cidr.split("/") as [string, string];
  return { net: parseIp(address)!.bytes, prefix: Number(prefix), kind };
};

// First match wins, so the broadcast address comes before the reserved 240/4 it lies in.
const IPV4_RANGES: readonly Range[] = [
  range("0.0.0.0/8", "unspecified"),
  range("10.0.0.0/8", "private"),
  range("100.64.0.0/10", "cgnat"),
  range("127.0.0.0/8", "loopback"),
  range("169.254.0.0/16", "link-local"),
  range("172.16.0.0/12", "private"),
  range("192.0.0.0/24", "reserved"),
  range("192.0.2.0/24", "documentation"),
  range("192.88.99.0/24", "reserved"),
  range("192.168.0.0/16", "private"),
  range("198.18.0.0/15", "benchmarking"),
  range("198.51.100.0/24", "documentation"),
  range("203.0.113.0/24", "documentation"),
  range("224.0.0.0/4", "multicast"),
  range("255.255.255.255/32", "broadcast"),
  range("240.0.0.0/4", "reserved"),
];

const IPV6_RANGES: readonly Range[] = [
  range("::/128", "unspecified"),
  range("::1/128", "loopback"),
  range("64:ff9b:1::/48", "private"),
  range("100::/64", "reserved"),
  range("2001::/32", "reserved"),
  range("2001:2::/48", "benchmarking"),
  range("2001:10::/28", "reserved"),
  range("2001:20::/28", "reserved"),
  range("2001:db8::/32", "documentation"),
  range("3fff::/20", "documentation"),
  range("5f00::/16", "reserved"),
  range("fc00::/7", "private"),
  range("fe80::/10", "link-local"),
  range("fec0::/10", "private"),
  range("ff00::/8", "multicast"),
];

/** Global unicast: an IPv6 address outside it (and outside the forms carrying IPv4) is not public. */
const GLOBAL_UNICAST = range("2000::/3", "public");
/** IPv6 prefixes whose address carries an IPv4 address, and where its four bytes start. */
const CARRIERS: ReadonlyArray<{ readonly range: Range; readonly at: number; readonly via: NonNullable<AddressClass["via"]> }> = [
  { range: range("::ffff:0:0/96", "public"), at: 12, via: "IPv4-mapped" },
  { range: range("64:ff9b::/96", "public"), at: 12, via: "NAT64" },
  { range: range("2002::/16", "public"), at: 2, via: "6to4" },
];

/** The address `text` writes (dotted IPv4, or IPv6 with an optional zone and IPv4 tail), or undefined. */
export function parseIp(text: string): IpAddress | undefined {
  if (isIPv4(text)) return { family: 4, bytes: Uint8Array.from(text.split(".").map(Number)) };
  // A zone (fe80::1%eth0) names an interface, not another address: the class is the address's.
  const bare = text.replace(/%[\w.-]+$/, "");
  if (!isIPv6(bare)) return undefined;
  return { family: 6, bytes: ipv6Bytes(bare) };
}

/** The 16 bytes of an IPv6 address node:net has accepted. */
function ipv6Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let tail = text;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const four = dotted[1]!.split(".").map(Number);
    const hex = ((four[0]! << 8) | four[1]!).toString(16) + ":" + ((four[2]! << 8) | four[3]!).toString(16);
    tail = text.slice(0, dotted.index) + hex;
  }
  const [head, rest] = tail.includes("::") ? (tail.split("::") as [string, string]) : [tail, undefined];
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const front = groups(head);
  const back = rest === undefined ? [] : groups(rest);
  const words = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  words.forEach((word, index) => {
    bytes[index * 2] = word >> 8;
    bytes[index * 2 + 1] = word & 0xff;
  });
  return bytes;
}

/** The canonical text of an address: dotted IPv4, or RFC 5952 IPv6 (an IPv4-mapped one as ::ffff:a.b.c.d). */
export function formatIp(address: IpAddress): string {
  const b = address.bytes;
  if (address.family === 4) return b.join(".");
  if (inRange(b, CARRIERS[0]!.range)) return `::ffff:${b.subarray(12).join(".")}`;
  const words = Array.from({ length: 8 }, (_, index) => (b[index * 2]! << 8) | b[index * 2 + 1]!);
  let best = { at: -1, length: 1 };
  for (let at = 0; at < 8; ) {
    let end = at;
    while (end < 8 && words[end] === 0) end += 1;
    if (end - at > best.length) best = { at, length: end - at };
    at = end === at ? at + 1 : end;
  }
  const hex = (list: number[]) => list.map((word) => word.toString(16)).join(":");
  if (best.at < 0) return hex(words);
  return `${hex(words.slice(0, best.at))}::${hex(words.slice(best.at + best.length))}`;
}

/** Whether `bytes` lie in `r` (same family assumed by length). */
function inRange(bytes: Uint8Array, r: Range): boolean {
  if (bytes.length !== r.net.length) return false;
  const whole = r.prefix >> 3;
  for (let index = 0; index < whole; index += 1) if (bytes[index] !== r.net[index]) return false;
  const bits = r.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (bytes[whole]! & mask) === (r.net[whole]! & mask);
}

/** The class of an address: public, or the internal kind it is (an IPv6 form carrying IPv4 classed by that IPv4). */
export function classifyIp(address: IpAddress): AddressClass {
  if (address.family === 4) return { kind: IPV4_RANGES.find((r) => inRange(address.bytes, r))?.kind ?? "public" };
  for (const carrier of CARRIERS) {
    if (!inRange(address.bytes, carrier.range)) continue;
    const inner = { family: 4 as const, bytes: address.bytes.slice(carrier.at, carrier.at + 4) };
    return { kind: classifyIp(inner).kind, via: carrier.via };
  }
  const found = IPV6_RANGES.find((r) => inRange(address.bytes, r));
  if (found) return { kind: found.kind };
  return { kind: inRange(address.bytes, GLOBAL_UNICAST) ? "public" : "reserved" };
}

/** "a private address", "a loopback address (IPv4-mapped)": how a denial names an address's class. */
export function describeClass(found: AddressClass): string {
  const article = /^[aeiou]/.test(found.kind) ? "an" : "a";
  return `${article} ${found.kind} address${found.via ? ` (${found.via})` : ""}`;
}
