/**
 * Jupyter multipart framing: [identities..., "<IDS|MSG>", signature, header, parent_header,
 * metadata, content, buffers...]. Decoding verifies the signature before parsing anything.
 */
import type { KernelMessage } from "@jupyterlab/services";
import { parseJsonWellFormed } from "../json/index.js";
import type { Signer } from "./signing.js";

export const DELIMITER = "<IDS|MSG>";
const DELIMITER_BYTES = Buffer.from(DELIMITER, "ascii");
const SIGNED_FRAMES = 4;

export type DecodeResult =
  | { readonly ok: true; readonly message: KernelMessage.IMessage; readonly identities: readonly Buffer[] }
  | { readonly ok: false; readonly reason: string };

/** The frames to send for `message`, signed with `signer`. */
export function serialize(message: KernelMessage.IMessage, signer: Signer): Buffer[] {
  const signed = [message.header, message.parent_header, message.metadata, message.content].map((part) =>
    Buffer.from(JSON.stringify(part), "utf8"),
  );
  const buffers = (message.buffers ?? []).map((buffer) =>
    ArrayBuffer.isView(buffer) ? Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength) : Buffer.from(buffer),
  );
  return [DELIMITER_BYTES, Buffer.from(signer.sign(signed), "ascii"), ...signed, ...buffers];
}

/** Decodes received frames; a missing delimiter, bad signature or malformed JSON is a value, not a throw. */
export function deserialize(frames: readonly Buffer[], signer: Signer, channel: KernelMessage.Channel): DecodeResult {
  const at = frames.findIndex((frame) => frame.equals(DELIMITER_BYTES));
  if (at < 0) return { ok: false, reason: "no <IDS|MSG> delimiter" };
  if (frames.length < at + 2 + SIGNED_FRAMES) return { ok: false, reason: "too few frames" };
  const signature = frames[at + 1]!;
  const signed = frames.slice(at + 2, at + 2 + SIGNED_FRAMES);
  if (!signer.verify(signature, signed)) return { ok: false, reason: "bad signature" };
  const parts = signed.map(parseObject);
  const [header, parentHeader, metadata, content] = parts;
  if (!header || !parentHeader || !metadata || !content) return { ok: false, reason: "a signed frame is not a JSON object" };
  if (typeof header.msg_id !== "string" || typeof header.msg_type !== "string") {
    return { ok: false, reason: "header lacks msg_id or msg_type" };
  }
  const message = {
    channel,
    header,
    parent_header: parentHeader,
    metadata,
    content,
    buffers: frames.slice(at + 2 + SIGNED_FRAMES).map((frame) => new Uint8Array(frame)),
  } as unknown as KernelMessage.IMessage;
  return { ok: true, message, identities: frames.slice(0, at) };
}

function parseObject(frame: Buffer): Record<string, unknown> | undefined {
  try {
    // A kernel is hostile: text it sends is made well-formed here, before anything stores or serves it.
    const value: unknown = parseJsonWellFormed(frame.toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The msg_id of the request a message answers, or undefined for unparented messages. */
export function parentMsgId(message: KernelMessage.IMessage): string | undefined {
  const parent = message.parent_header as Partial<KernelMessage.IHeader>;
  return typeof parent.msg_id === "string" && parent.msg_id.length > 0 ? parent.msg_id : undefined;
}
