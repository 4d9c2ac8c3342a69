import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeUtf8Strict, firstInvalidUtf8 } from "../../src/json/index.js";

describe("B strict UTF-8: bytes that are not UTF-8 are refused with the offset where they stop being it", () => {
  it("names the first ill-formed sequence: stray continuation, overlong, surrogate, past U+10FFFF, cut off", () => {
    const cases: [number[], number][] = [
      [[0x61, 0x80], 1],
      [[0x61, 0xc0, 0xaf], 1],
      [[0xe0, 0x80, 0xaf], 0],
      [[0x61, 0x62, 0xed, 0xa0, 0x80], 2],
      [[0xf4, 0x90, 0x80, 0x80], 0],
      [[0x61, 0xe2, 0x82], 1],
      [[0xe2, 0x82, 0xac, 0xff], 3],
      [[0xf0, 0x9d, 0x84, 0x9e, 0x61], 5],
    ];
    for (const [bytes, offset] of cases) expect([bytes, firstInvalidUtf8(Uint8Array.from(bytes))]).toEqual([bytes, offset]);
  });

  it("agrees with a fatal TextDecoder on any bytes, and decodes what is valid (property)", () => {
    const bytes = fc.oneof(fc.uint8Array({ maxLength: 24 }), fc.string({ unit: "grapheme" }).map((text) => new TextEncoder().encode(text)));
    fc.assert(
      fc.property(bytes, fc.uint8Array({ maxLength: 3 }), (valid, tail) => {
        const input = Uint8Array.from([...valid, ...tail]);
        let expected: string | undefined;
        try {
          expected = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(input);
        } catch {
          expected = undefined;
        }
        const decoded = decodeUtf8Strict(input);
        expect(decoded.ok).toBe(expected !== undefined);
        if (decoded.ok) expect(decoded.text).toBe(expected);
        else {
          expect(decoded.offset).toBeLessThan(input.length);
          // Everything before the offset is well formed.
          expect(() => new TextDecoder("utf-8", { fatal: true }).decode(input.subarray(0, decoded.offset))).not.toThrow();
        }
      }),
      { numRuns: 2000 },
    );
  });
});
