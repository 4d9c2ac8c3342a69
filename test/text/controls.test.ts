import { describe, expect, it } from "vitest";
import { jsonWithoutControls, visibleControls } from "../../src/text/index.js";

describe("X B visibleControls", () => {
  it("shows C0 controls as control pictures, DEL as ␡ and C1 controls as \\u escapes", () => {
    expect(visibleControls("a\x1b]0;pwned\x07\x1b[2J")).toBe("a␛]0;pwned␇␛[2J");
    expect(visibleControls("\x00\t\n\r\x7f")).toBe("␀␉␊␍␡");
    expect(visibleControls("\u0080 \u009b2J \u009f")).toBe("\\u0080 \\u009b2J \\u009f");
  });

  it("shows the bidirectional controls as \\u escapes: marks, embeddings, overrides and isolates", () => {
    expect(visibleControls("a\u202eb\u202cc")).toBe(String.raw`a\u202eb\u202cc`);
    const all = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069";
    expect(visibleControls(all)).toBe(String.raw`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`);
    // Their neighbours are ordinary text: zero-width joiners and spaces, and U+2065 (unassigned).
    expect(visibleControls("\u200c\u200d\u2065\u2070 שלום")).toBe("\u200c\u200d\u2065\u2070 שלום");
  });

  it("passes through the controls a layout keeps, and every other character", () => {
    expect(visibleControls("one\n\ttwo\r\n", "\n\t")).toBe("one\n\ttwo␍\n");
    expect(visibleControls("héllo ✓ \u00a0 ␛")).toBe("héllo ✓ \u00a0 ␛");
  });
});

describe("X B jsonWithoutControls", () => {
  it("escapes DEL and C1 controls, which JSON.stringify leaves raw, and parses back to the same value", () => {
    const value = { text: "a\x1b\x7f\u009b\u00a0" };
    const json = jsonWithoutControls(JSON.stringify(value));
    expect(json).toBe('{"text":"a\\u001b\\u007f\\u009b\u00a0"}');
    expect(JSON.parse(json)).toEqual(value);
  });

  it("escapes the bidirectional controls too", () => {
    const value = { text: "x\u202ey\u2066z\u200f" };
    const json = jsonWithoutControls(JSON.stringify(value));
    expect(json).toBe(String.raw`{"text":"x\u202ey\u2066z\u200f"}`);
    expect(JSON.parse(json)).toEqual(value);
  });
});
