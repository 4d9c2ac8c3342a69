import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { completeUtf8Length, decodeUtf8Strict, firstInvalidUtf8 } from "../../src/json/index.js";

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

describe("R-2 S-11 one boundary rule for bounded text: a page never ends inside a sequence", () => {
  // Each length of sequence, with the edges of the second byte's range (E0 A0, ED 9F, F0 90, F4 8F).
  const characters = ["a", "é", "€", "\u0800", "\ud7ff", "\u{10000}", "\u{10ffff}", "😀"];

  it("cuts at every byte inside every sequence back to its start, and keeps every whole one", () => {
    for (const character of characters) {
      const bytes = Buffer.from(`xy${character}`, "utf8");
      for (let end = 0; end <= bytes.length; end++) {
        const expected = end <= 2 || end === bytes.length ? end : 2;
        expect(completeUtf8Length(bytes.subarray(0, end)), `${JSON.stringify(character)} cut at ${end}`).toBe(expected);
      }
    }
  });

  it("leaves an ill-formed tail for the decoder to refuse rather than hiding it", () => {
    const tails: number[][] = [[0x80], [0xc0], [0xc1, 0xbf], [0xe0, 0x80], [0xed, 0xa0], [0xf4, 0x90], [0xf5], [0xff], [0xe2, 0x41]];
    for (const tail of tails) {
      const bytes = Uint8Array.from([0x61, ...tail]);
      expect(completeUtf8Length(bytes), JSON.stringify(tail)).toBe(bytes.length);
    }
  });

  it("agrees with the strict decoder: what it keeps of valid text always decodes, and resumes exactly", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), fc.nat(64), (text, cut) => {
      const bytes = Buffer.from(text, "utf8");
      const page = bytes.subarray(0, Math.min(cut, bytes.length));
      const keep = completeUtf8Length(page);
      expect(decodeUtf8Strict(page.subarray(0, keep)).ok).toBe(true);
      expect(page.length - keep).toBeLessThan(4);
      expect(decodeUtf8Strict(bytes.subarray(keep)).ok).toBe(true);
    }));
  });
});
