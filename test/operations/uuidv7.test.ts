import { describe, expect, it } from "vitest";
import { newOperationId, parseUuidV7 } from "../../src/operations/index.js";

describe("O-1 UUIDv7 operation ids", () => {
  it("generates version-7, RFC 9562 variant ids carrying the given time", () => {
    const at = Date.UTC(2025, 5, 1, 12, 30, 15, 123);
    const ids = Array.from({ length: 50 }, () => newOperationId(at));
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseUuidV7(id)).toBe(at);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("parses upper case and refuses other versions, other variants and non-UUIDs", () => {
    const id = newOperationId(1_700_000_000_000);
    expect(parseUuidV7(id.toUpperCase())).toBe(1_700_000_000_000);
    expect(parseUuidV7("3b241101-e2bb-4255-8caf-4136c566a962")).toBeUndefined();
    expect(parseUuidV7(id.slice(0, 19) + "c" + id.slice(20))).toBeUndefined();
    expect(parseUuidV7(id.slice(0, 19) + "7" + id.slice(20))).toBeUndefined();
    expect(parseUuidV7(id + "0")).toBeUndefined();
    expect(parseUuidV7("")).toBeUndefined();
  });

  it("refuses a time the 48-bit field cannot hold", () => {
    expect(() => newOperationId(-1)).toThrow(RangeError);
    expect(() => newOperationId(2 ** 48)).toThrow(RangeError);
  });
});
