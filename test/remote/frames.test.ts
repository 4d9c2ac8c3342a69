import { KernelMessage, ServerConnection } from "@jupyterlab/services";
import { describe, expect, it } from "vitest";
import { decodeFrame, RemoteFrameError, v1Protocol } from "../../src/kernel/remote/frames.js";

const V1_PROTOCOL = v1Protocol();

const { serialize } = ServerConnection.makeSettings().serializer;

/** A text no reason may quote: a frame's own bytes never reach an error. */
const SECRET = "jt-secret-in-the-frame";

function message(channel: string, msgType: string, content: Record<string, unknown>, buffers?: ArrayBuffer[]): KernelMessage.IMessage {
  return {
    channel, content, metadata: {}, parent_header: {},
    header: { msg_id: "m1", msg_type: msgType, session: "s1", username: "u", version: "5.3", date: "2026-01-01T00:00:00Z" },
    ...(buffers ? { buffers } : {}),
  } as unknown as KernelMessage.IMessage;
}

/** The frame services would send, as the socket hands it over (binary frames as ArrayBuffer). */
function frameOf(msg: KernelMessage.IMessage, protocol: string): string | ArrayBuffer {
  const data = serialize(structuredClone(msg), protocol);
  return typeof data === "string" ? data : data.slice(0);
}

function refusal(data: unknown, protocol: string): string {
  try {
    decodeFrame(data, protocol);
  } catch (error) {
    expect(error).toBeInstanceOf(RemoteFrameError);
    return (error as RemoteFrameError).reason;
  }
  throw new Error("the frame was accepted");
}

function v1Table(offsets: readonly bigint[], length: number): ArrayBuffer {
  const frame = Buffer.alloc(length, 0x7b);
  frame.writeBigUInt64LE(BigInt(offsets.length), 0);
  offsets.forEach((offset, i) => frame.writeBigUInt64LE(offset, 8 * (i + 1)));
  return frame.buffer.slice(frame.byteOffset, frame.byteOffset + length);
}

describe("K-12 B decoding a remote server's WebSocket frames (decodeFrame)", () => {
  it("reads what a Jupyter peer sends, in both framings, buffers included", () => {
    const stream = message("iopub", "stream", { name: "stdout", text: "hi\n" });
    const withBuffers = message("iopub", "comm_msg", { comm_id: "c", data: {} }, [new Uint8Array([1, 2, 3]).buffer]);
    for (const protocol of [V1_PROTOCOL, ""]) {
      expect(decodeFrame(frameOf(stream, protocol), protocol)).toMatchObject({ channel: "iopub", header: { msg_type: "stream" }, content: { text: "hi\n" } });
      const decoded = decodeFrame(frameOf(withBuffers, protocol), protocol);
      expect([...new Uint8Array((decoded.buffers![0] as DataView).buffer)]).toEqual([1, 2, 3]);
    }
  });

  it.each([
    ["garbage text", `{{ ${SECRET}`, "", /^a text frame that is not JSON$/],
    ["JSON that is not an object", JSON.stringify([SECRET]), "", /^a text frame that is JSON but not an object$/],
    ["JSON that is not a kernel message", JSON.stringify({ hello: SECRET }), "", /^JSON that is not a Jupyter kernel message/],
    ["a text frame on the v1 framing", frameOf(message("shell", "x", {}), ""), V1_PROTOCOL, /^a text frame on a connection that speaks v1/],
    ["a binary frame too short for its table", new ArrayBuffer(7), V1_PROTOCOL, /offset table does not fit it/],
    ["a v1 table claiming more offsets than the frame holds", v1Table([2n ** 60n], 64), V1_PROTOCOL, /offset table does not fit it/],
    ["v1 offsets past the frame", v1Table([56n, 57n, 9_999n, 9_999n, 9_999n, 9_999n], 64), V1_PROTOCOL, /offsets do not describe it/],
    ["a legacy binary table that does not fit", new ArrayBuffer(3), "", /legacy layout \(its offset table does not fit it\)/],
    ["a subprotocol albedo did not offer", "{}", "other.protocol", /subprotocol albedo did not offer/],
  ])("refuses %s, without quoting it", (_name, data, protocol, reason) => {
    const said = refusal(data, protocol);
    expect(said).toMatch(reason);
    expect(said).not.toContain(SECRET);
  });

  it.each([
    ["a header without msg_id", { ...message("shell", "x", {}), header: { msg_type: "x", session: "s", username: "u", version: "5.3" } }, /header has no msg_id string/],
    ["content that is not an object", { ...message("shell", "x", {}), content: SECRET }, /content is not an object/],
    ["an iopub stream without text", message("iopub", "stream", { name: "stdout" }), /iopub stream message whose text is not a string/],
    ["an unknown execution state", message("iopub", "status", { execution_state: SECRET }), /unknown execution_state/],
    // services reads this list in a promise nobody catches: anything else would end the process.
    ["a kernel_info_reply whose supported_features is not a list", message("shell", "kernel_info_reply", { supported_features: 5 }), /supported_features is not a list/],
    ["a key that breaks services' own check", { ...message("shell", "x", {}), content: { hasOwnProperty: 1 } }, /content is not an object/],
  ])("refuses a message with %s, in both framings", (_name, msg, reason) => {
    for (const protocol of [V1_PROTOCOL, ""]) expect(refusal(frameOf(msg as KernelMessage.IMessage, protocol), protocol)).toMatch(reason);
  });
});
