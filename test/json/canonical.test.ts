import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/json/index.js";

describe("canonicalJson", () => {
  it("sorts keys at every depth, so key order never changes the text", () => {
    const a = { b: 1, a: { d: [{ y: 2, x: 1 }], c: null } };
    const b = { a: { c: null, d: [{ x: 1, y: 2 }] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"c":null,"d":[{"x":1,"y":2}]},"b":1}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it("follows JSON.stringify for undefined: dropped from objects, null inside arrays", () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });

  it("keeps array order, which carries meaning", () => {
    expect(canonicalJson([3, 1, 2])).toBe("[3,1,2]");
  });
});
