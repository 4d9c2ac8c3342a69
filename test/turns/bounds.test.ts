import { describe, expect, it } from "vitest";
import { boundToolText, GatheredText } from "../../src/turns/tools/bounds.js";

describe("O-3 B the python tool keeps what it may return as output arrives and counts the rest", () => {
  it("keeps at most the limit, on a character boundary, and counts every byte added", () => {
    const gathered = new GatheredText(10);
    gathered.add("abcdefghi");
    gathered.add("é"); // two bytes with room for one: not split, not kept
    gathered.add("x".repeat(1000));
    expect(gathered.text).toBe("abcdefghi");
    expect(gathered.bytes).toBe(9 + 2 + 1000);
  });

  it("a text at the limit is kept whole; one byte more is cut with a note counting what was never kept", () => {
    const exact = new GatheredText(1000);
    exact.add("y".repeat(1000));
    expect(boundToolText(exact.text, 1000, exact.bytes)).toEqual({ text: "y".repeat(1000), truncated: false });
    const over = new GatheredText(1000);
    over.add("y".repeat(1000));
    over.add("z".repeat(3 * 1024 * 1024));
    const bounded = boundToolText(over.text, 1000, over.bytes);
    expect(bounded.truncated).toBe(true);
    expect(Buffer.byteLength(bounded.text)).toBeLessThanOrEqual(1000);
    const shown = bounded.text.split("\n")[0]!.length;
    expect(bounded.text).toContain(`[albedo: ${((1000 + 3 * 1024 * 1024 - shown) / 1024 / 1024).toFixed(1)} MB more left out`);
  });
});
