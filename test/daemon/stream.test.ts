import { describe, expect, it } from "vitest";
import { MAX_STREAM_MESSAGE_BYTES } from "../../src/daemon/index.js";
import { streamFrame } from "../../src/daemon/stream.js";

describe("D-2 B one stream message is bounded", () => {
  it("cuts an event larger than MAX_STREAM_MESSAGE_BYTES with a marker, keeping its type and ids", () => {
    const event = { type: "transcript" as const, turn: { turnId: "t", visibleText: "v".repeat(2 * MAX_STREAM_MESSAGE_BYTES), modelInput: "m".repeat(MAX_STREAM_MESSAGE_BYTES) } };
    const frame = streamFrame("s1", event);
    expect(frame.length).toBeLessThanOrEqual(MAX_STREAM_MESSAGE_BYTES);
    const message = JSON.parse(frame.toString("utf8"));
    expect(message).toMatchObject({ session_id: "s1", type: "transcript", turn: { turnId: "t" } });
    expect(message.turn.visibleText).toMatch(/\[albedo: [\d.]+ MB of output dropped: more than MAX_STREAM_MESSAGE_BYTES \(4\.0 MB\) in one stream message\]\n$/);
  });

  it("sends a small event as its JSON, made once however many clients read it", () => {
    const event = { type: "status" as const, kernel: "idle", revision: "r" };
    const frame = streamFrame("s1", event);
    expect(JSON.parse(frame.toString("utf8"))).toEqual({ session_id: "s1", ...event });
    expect(streamFrame("s1", event)).toBe(frame);
  });
});
