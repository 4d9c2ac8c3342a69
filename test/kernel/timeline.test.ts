import { describe, expect, it } from "vitest";
import { headerDateMs } from "../../src/kernel/index.js";

describe("K-2 header dates on the runtime's clock", () => {
  it("keeps a header date's microseconds, whatever its offset notation", () => {
    const whole = Date.UTC(2026, 10, 30, 19, 20, 1, 123);
    expect(headerDateMs("2026-11-30T19:20:01.123456Z")).toBeCloseTo(whole + 0.456, 6);
    expect(headerDateMs("2026-11-30T19:20:01.123456+00:00")).toBeCloseTo(whole + 0.456, 6);
    expect(headerDateMs("2026-11-30T19:20:01.123Z")).toBe(whole);
    expect(headerDateMs("2026-11-30T19:20:01Z")).toBe(whole - 123);
  });

  it("is undefined for anything that is not a date", () => {
    expect(headerDateMs(undefined)).toBeUndefined();
    expect(headerDateMs(12)).toBeUndefined();
    expect(headerDateMs("yesterday")).toBeUndefined();
  });
});
