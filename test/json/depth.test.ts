import { describe, expect, it } from "vitest";
import { jsonNestingDepth, jsonTextNestingDepth } from "../../src/json/index.js";

describe("B jsonNestingDepth", () => {
  it("counts levels of arrays and objects; a scalar is 0", () => {
    expect(jsonNestingDepth("text", 8)).toBe(0);
    expect(jsonNestingDepth(null, 8)).toBe(0);
    expect(jsonNestingDepth({}, 8)).toBe(1);
    expect(jsonNestingDepth({ a: [1, { b: [] }], c: 2 }, 8)).toBe(4);
  });

  it("stops at limit + 1 and never recurses, whatever the depth", () => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000)) as unknown;
    expect(jsonNestingDepth(deep, 64)).toBe(65);
    expect(jsonNestingDepth(JSON.parse("[[[]]]"), 3)).toBe(3);
    expect(jsonNestingDepth(JSON.parse("[[[]]]"), 2)).toBe(3);
  });
});

describe("B jsonTextNestingDepth", () => {
  it("counts levels in JSON text without parsing it; brackets inside strings do not count", () => {
    expect(jsonTextNestingDepth('"text"', 8)).toBe(0);
    expect(jsonTextNestingDepth('{"a": [1, {"b": []}], "c": 2}', 8)).toBe(4);
    expect(jsonTextNestingDepth('{"a": "[[[{{{", "b": "\\"[["}', 8)).toBe(1);
    expect(jsonTextNestingDepth('{"code": [[[', 8)).toBe(4);
  });

  it("stops at limit + 1, whatever the depth", () => {
    expect(jsonTextNestingDepth("[".repeat(100_000) + "]".repeat(100_000), 64)).toBe(65);
    expect(jsonTextNestingDepth("[[[]]]", 3)).toBe(3);
  });
});
