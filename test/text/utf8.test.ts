import { describe, expect, it } from "vitest";
import { escapeInvalidUtf8 } from "../../src/text/index.js";

describe("S-5 B escapeInvalidUtf8", () => {
  it("decodes valid UTF-8 and writes each stray byte as \\xNN", () => {
    expect(escapeInvalidUtf8(Buffer.from("héllo ✓ 𝄞"))).toBe("héllo ✓ 𝄞");
    expect(escapeInvalidUtf8(Buffer.from([0x61, 0xff, 0x62]))).toBe("a\\xff" + "b");
    // A lead byte cut short, an overlong "/", and a UTF-16 surrogate encoded in UTF-8: none is a character.
    expect(escapeInvalidUtf8(Buffer.from([0xc3, 0x61]))).toBe("\\xc3a");
    expect(escapeInvalidUtf8(Buffer.from([0xc0, 0xaf]))).toBe("\\xc0\\xaf");
    expect(escapeInvalidUtf8(Buffer.from([0xed, 0xa0, 0x80, 0x7a]))).toBe("\\xed\\xa0\\x80z");
    expect(escapeInvalidUtf8(Buffer.from([0xe2, 0x9c]))).toBe("\\xe2\\x9c");
  });
});
