import { describe, expect, it } from "vitest";
import { classifyIp, describeClass, formatIp, parseIp, type AddressKind } from "../../src/network/addresses.js";

const kind = (text: string) => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`${text} did not parse`);
  return classifyIp(parsed);
};

describe("N-2 address classes: IPv4", () => {
  const table: Array<[string, AddressKind]> = [
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.15.255.255", "public"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.0", "public"],
    ["192.168.1.1", "private"],
    ["100.63.255.255", "public"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["100.128.0.0", "public"],
    ["127.0.0.1", "loopback"],
    ["127.0.0.2", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "link-local"],
    ["169.254.0.1", "link-local"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.1", "documentation"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.9", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["198.20.0.0", "public"],
    ["192.88.99.1", "reserved"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.254", "reserved"],
    ["255.255.255.255", "broadcast"],
  ];
  it.each(table)("%s is %s", (address, expected) => {
    expect(kind(address)).toEqual({ kind: expected });
  });
});

describe("N-2 address classes: IPv6, and IPv6 forms carrying IPv4", () => {
  const table: Array<[string, AddressKind, string?]> = [
    ["2606:4700:4700::1111", "public"],
    ["2a00:1450:4001::200e", "public"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["fc00::1", "private"],
    ["fd12:3456:789a::1", "private"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["ff0e::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001::1", "reserved"],
    ["2001:2::1", "benchmarking"],
    ["100::1", "reserved"],
    ["::2", "reserved"],
    ["::10.0.0.1", "reserved"],
    ["4000::1", "reserved"],
    ["5f00::1", "reserved"],
    ["64:ff9b:1::1", "private"],
    ["::ffff:127.0.0.1", "loopback", "IPv4-mapped"],
    ["::FFFF:7f00:1", "loopback", "IPv4-mapped"],
    ["::ffff:10.1.2.3", "private", "IPv4-mapped"],
    ["::ffff:169.254.169.254", "link-local", "IPv4-mapped"],
    ["::ffff:8.8.8.8", "public", "IPv4-mapped"],
    ["64:ff9b::10.0.0.1", "private", "NAT64"],
    ["64:ff9b::a9fe:a9fe", "link-local", "NAT64"],
    ["64:ff9b::8.8.8.8", "public", "NAT64"],
    ["2002:7f00:1::1", "loopback", "6to4"],
    ["2002:c0a8:0101::1", "private", "6to4"],
    ["2002:0808:0808::1", "public", "6to4"],
  ];
  it.each(table)("%s is %s %s", (address, expected, via) => {
    expect(kind(address)).toEqual(via === undefined ? { kind: expected } : { kind: expected, via });
  });

  it("says a class in words for a denial", () => {
    expect(describeClass(kind("::ffff:127.0.0.1"))).toBe("a loopback address (IPv4-mapped)");
    expect(describeClass(kind("169.254.169.254"))).toBe("a link-local address");
    expect(describeClass(kind("::"))).toBe("an unspecified address");
  });
});

describe("N-2 addresses in one canonical form", () => {
  it.each([
    ["::FFFF:127.0.0.1", "::ffff:127.0.0.1"],
    ["::ffff:7f00:1", "::ffff:127.0.0.1"],
    ["2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:db8:0:0:0:0:2:1", "2001:db8::2:1"],
    ["0:0:0:0:0:0:0:0", "::"],
    ["0:0:0:0:0:0:0:1", "::1"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2:3:4:5:6"],
    ["10.0.0.1", "10.0.0.1"],
  ])("%s is written %s", (text, canonical) => {
    expect(formatIp(parseIp(text)!)).toBe(canonical);
  });

  it("is not fooled by a name or a number that is not an address", () => {
    for (const text of ["example.com", "1.2.3", "256.1.1.1", "1.2.3.4.5", ":::", "[::1]", "::1%", ""]) expect(parseIp(text), text).toBeUndefined();
  });
});
