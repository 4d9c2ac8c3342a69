import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundJson, humanSize, jsonBytes, MAX_BOUNDED_DEPTH, MIN_BOUND_BYTES } from "../../src/json/index.js";

const marker = (dropped: number) => `[test: ${humanSize(dropped)} dropped]`;

describe("B bounded JSON: a value is cut to its byte budget, and says so", () => {
  it("returns a value that fits as it is, with its exact size", () => {
    const value = { name: "stdout", text: "héllo ☕\n\u0000\"" };
    const bounded = boundJson(value, MIN_BOUND_BYTES, marker);
    expect(bounded.value).toBe(value);
    expect(bounded.bytes).toBe(jsonBytes(value));
    expect(bounded.droppedBytes).toBe(0);
  });

  it("cuts a long string to the budget, ending with a marker that says how much went", () => {
    const text = "x".repeat(100_000);
    const bounded = boundJson({ name: "stdout", text }, 4096, marker);
    expect(bounded.bytes).toBe(jsonBytes(bounded.value));
    expect(bounded.bytes).toBeLessThanOrEqual(4096);
    expect(bounded.value.name).toBe("stdout");
    expect(bounded.value.text.startsWith("xxxx")).toBe(true);
    expect(bounded.value.text).toMatch(/\[test: 9\d\.\d KB dropped\]\n$/);
    expect(bounded.droppedBytes).toBeGreaterThan(90_000);
  });

  it("counts escapes: a string of control characters is cut by its JSON size, not its length", () => {
    const bounded = boundJson("\u0001".repeat(10_000), 2048, marker);
    expect(jsonBytes(bounded.value)).toBeLessThanOrEqual(2048);
  });

  it("shares the budget among large fields and keeps small ones whole (a display_data bundle)", () => {
    const content = { data: { "text/plain": "p".repeat(50_000), "text/html": "h".repeat(50_000) }, metadata: { isolated: true }, transient: {} };
    const bounded = boundJson(content, 8192, marker);
    expect(bounded.bytes).toBeLessThanOrEqual(8192);
    expect(bounded.value.metadata).toEqual({ isolated: true });
    expect(bounded.value.transient).toEqual({});
    expect(bounded.value.data["text/plain"].length).toBeGreaterThan(2000);
    expect(bounded.value.data["text/html"].length).toBeGreaterThan(2000);
  });

  it("keeps the first items of a long array and ends it with one marker item", () => {
    const bounded = boundJson(Array.from({ length: 100_000 }, (_, i) => i), 4096, marker);
    expect(bounded.bytes).toBeLessThanOrEqual(4096);
    expect(bounded.value.slice(0, 3)).toEqual([0, 1, 2]);
    expect(bounded.value.at(-1)).toMatch(/^\[test: .* dropped\]$/);
  });

  it(`replaces what nests deeper than MAX_BOUNDED_DEPTH (${MAX_BOUNDED_DEPTH}) with a marker`, () => {
    let deep: unknown = "bottom";
    for (let level = 0; level < 10_000; level += 1) deep = [deep];
    const bounded = boundJson(deep, 64 * MIN_BOUND_BYTES, marker);
    let depth = 0;
    for (let at: unknown = bounded.value; Array.isArray(at); at = at[0]) depth += 1;
    expect(depth).toBe(MAX_BOUNDED_DEPTH);
    expect(JSON.stringify(bounded.value)).toContain("[test:");
  });

  it("refuses a budget below MIN_BOUND_BYTES", () => {
    expect(() => boundJson("x", MIN_BOUND_BYTES - 1, marker)).toThrow(RangeError);
  });

  it("never passes the budget, and leaves a value that fits untouched (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: MIN_BOUND_BYTES, max: 4 * MIN_BOUND_BYTES }), (value, budget) => {
        const bounded = boundJson(value, budget, marker);
        expect(bounded.bytes).toBe(jsonBytes(bounded.value));
        expect(bounded.bytes).toBeLessThanOrEqual(budget);
        if (jsonBytes(value) <= budget) expect(bounded.value).toBe(value);
        else expect(bounded.droppedBytes).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it("never passes the budget for large strings with escapes and astral characters (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary", minLength: 500, maxLength: 3000 }), { minLength: 1, maxLength: 8 }), (texts) => {
        const value = { data: Object.fromEntries(texts.map((text, i) => [`k${i}`, text])), lines: texts };
        const bounded = boundJson(value, MIN_BOUND_BYTES, marker);
        expect(bounded.bytes).toBe(jsonBytes(bounded.value));
        expect(bounded.bytes).toBeLessThanOrEqual(MIN_BOUND_BYTES);
      }),
      { numRuns: 200 },
    );
  });
});
