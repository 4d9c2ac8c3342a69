import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineFrames, LineTooLong } from "../../src/json/index.js";

/** What LineFrames passes on for `chunks` to a reader in flowing mode (as the MCP SDKs read), each chunk as one string, and the error it ended with. */
function framed(chunks: readonly string[], maxBytes: number): Promise<{ frames: string[]; error?: unknown }> {
  const frames: string[] = [];
  const stream = Readable.from(chunks.map((chunk) => Buffer.from(chunk))).pipe(new LineFrames(maxBytes));
  return new Promise((resolve) => {
    stream.on("data", (frame: Buffer) => frames.push(frame.toString()));
    stream.on("end", () => resolve({ frames }));
    stream.on("error", (error) => resolve({ frames, error }));
  });
}

describe("LineFrames: a byte stream as whole lines", () => {
  it("passes one chunk per line, joining a line split over chunks and splitting chunks that hold several", async () => {
    expect((await framed(["ab", "c\nde", "f\ng\n", "\n"], 100)).frames).toEqual(["abc\n", "def\n", "g\n", "\n"]);
  });

  it("passes text after the last newline at the end", async () => {
    expect((await framed(["a\nrest", " of it"], 100)).frames).toEqual(["a\n", "rest of it"]);
  });

  it("ends with LineTooLong for a line over the bound, counting its newline, after the lines before it", async () => {
    const ten = "x".repeat(9) + "\n";
    expect((await framed([ten], 10)).frames).toEqual([ten]);
    const { frames, error } = await framed(["ok\n", "x".repeat(6), "x".repeat(5), "\n"], 10);
    expect(frames).toEqual(["ok\n"]);
    expect(error).toBeInstanceOf(LineTooLong);
    expect((error as LineTooLong).message).toBe("a line over 10 bytes arrived");
  });

  it("stops holding a line once it passes the bound, though its newline never comes", async () => {
    const { error } = await framed(Array.from({ length: 50 }, () => "y".repeat(1000)), 4096);
    expect(error).toBeInstanceOf(LineTooLong);
  });
});
