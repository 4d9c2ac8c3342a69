import { describe, expect, it } from "vitest";
import { jsonWithoutControls, visibleControls } from "../../src/text/index.js";

describe("X B visibleControls", () => {
  it("shows C0 controls as control pictures, DEL as ␡ and C1 controls as \\u escapes", () => {
    expect(visibleControls("a\x1b]0;pwned\x07\x1b[2J")).toBe("a␛]0;pwned␇␛[2J");
    expect(visibleControls("\x00\t\n\r\x7f")).toBe("␀␉␊␍␡");
    expect(visibleControls("\u0080 \u009b2J \u009f")).toBe("\\u0080 \\u009b2J \\u009f");
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
});
