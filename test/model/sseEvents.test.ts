import { describe, expect, it } from "vitest";
import { eventEnd, SseEventTooLargeError, sseEvents } from "../../src/model/sseEvents.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the transform hands on when `pieces` arrive in order, or the error it fails with. */
async function recut(pieces: readonly string[], maxBytes: number): Promise<string[] | Error> {
  const out: string[] = [];
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
  const reader = source.pipeThrough(sseEvents(maxBytes)).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return out;
      out.push(decoder.decode(value));
    }
  } catch (error) {
    return error as Error;
  }
}

/** Events with each ending the SDKs know, a comment, a multi-line event, and an unended last one. */
const STREAM = 'data: {"a":1}\n\nevent: x\ndata: 2\r\n\r\n: keep-alive\r\r' + "data: line one\ndata: line two\n\n" + "data: no end";

describe("O-7 B model event streams are cut into whole events before the SDK reads them", () => {
  it("hands on every byte, one whole event per piece, wherever the network cut the stream (an end across two pieces too)", async () => {
    for (let size = 1; size <= STREAM.length; size += 1) {
      const pieces: string[] = [];
      for (let at = 0; at < STREAM.length; at += size) pieces.push(STREAM.slice(at, at + size));
      const events = await recut(pieces, 1024);
      if (events instanceof Error) throw events;
      expect(events.join("")).toBe(STREAM);
      expect(events).toEqual(['data: {"a":1}\n\n', "event: x\ndata: 2\r\n\r\n", ": keep-alive\r\r", "data: line one\ndata: line two\n\n", "data: no end"]);
    }
  });

  it("fails once one event passes its bound, ended or not, and takes one at the bound", async () => {
    const atBound = `data: ${"x".repeat(100 - 8)}\n\n`;
    expect(await recut([atBound], 100)).toEqual([atBound]);
    const over = await recut(["data: ", "x".repeat(200)], 100);
    expect(over).toBeInstanceOf(SseEventTooLargeError);
    expect((over as SseEventTooLargeError).maxBytes).toBe(100);
    expect(await recut([`data: ${"x".repeat(100)}\n\n`], 100)).toBeInstanceOf(SseEventTooLargeError);
  });

  it("finds an event's end as the SDKs do (\\n\\n, \\r\\r, \\r\\n\\r\\n), from a given index", () => {
    expect(eventEnd(encoder.encode("a\n\nb"))).toBe(3);
    expect(eventEnd(encoder.encode("a\r\rb"))).toBe(3);
    expect(eventEnd(encoder.encode("a\r\n\r\nb"))).toBe(5);
    expect(eventEnd(encoder.encode("a\r\n\r"))).toBe(-1);
    expect(eventEnd(encoder.encode("a\nb\n"))).toBe(-1);
    expect(eventEnd(encoder.encode("\n\na\n\n"), 1)).toBe(5);
  });
});
