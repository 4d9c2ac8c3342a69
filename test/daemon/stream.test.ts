import { describe, expect, it } from "vitest";
import { MAX_STREAM_MESSAGE_BYTES } from "../../src/daemon/index.js";
import type { HostedSession } from "../../src/daemon/sessionPort.js";
import { streamFrame } from "../../src/daemon/stream.js";

/** Just enough of a session for its stream messages. */
const live = { id: "s1", warm: false, session: { status: () => ({ kernel: "idle", pid: 7, sandbox: "none", sandboxNotes: [] }) } } as unknown as HostedSession;

describe("D-2 B one stream message is bounded", () => {
  it("cuts an event larger than MAX_STREAM_MESSAGE_BYTES with a marker, keeping its type and ids", () => {
    const turn = { turnId: "t", operationId: "o", sessionId: "s1", visibleText: "v".repeat(2 * MAX_STREAM_MESSAGE_BYTES), modelInput: "m".repeat(MAX_STREAM_MESSAGE_BYTES), state: "pending" as const, createdAt: 0, updatedAt: 0 };
    const event = { type: "transcript" as const, turn };
    const frame = streamFrame(live, event);
    expect(frame.length).toBeLessThanOrEqual(MAX_STREAM_MESSAGE_BYTES);
    const message = JSON.parse(frame.toString("utf8"));
    expect(message).toMatchObject({ session_id: "s1", type: "transcript", turn: { turn_id: "t" } });
    expect(message.turn.visible_text).toMatch(/\[albedo: [\d.]+ MB of output dropped: more than MAX_STREAM_MESSAGE_BYTES \(4\.0 MB\) in one stream message\]\n$/);
  });

  it("sends a small event as its JSON, made once however many clients read it; a status carries the session's kernel resource", () => {
    const event = { type: "status" as const, kernel: "busy", revision: "r" };
    const frame = streamFrame(live, event);
    expect(JSON.parse(frame.toString("utf8"))).toEqual({
      type: "status",
      session_id: "s1",
      kernel: { status: "busy", pid: 7, sandbox: "none", sandbox_notes: [], warm: false, checkpoints: false, restore: null },
      reason: null,
      revision: "r",
    });
    expect(streamFrame(live, event)).toBe(frame);
  });
});
