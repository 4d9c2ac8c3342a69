import { utf8SequenceAt } from "../json/index.js";

/**
 * `bytes` as text a person can read back to the bytes: valid UTF-8 decoded, each byte that starts
 * no valid sequence written as `\xNN`. For names the file system holds but UTF-8 cannot spell.
 */
export function escapeInvalidUtf8(bytes: Uint8Array): string {
  let text = "";
  let start = 0;
  let at = 0;
  while (at < bytes.length) {
    const length = utf8SequenceAt(bytes, at);
    if (length > 0) {
      at += length;
      continue;
    }
    text += Buffer.from(bytes.subarray(start, at)).toString("utf8") + `\\x${bytes[at]!.toString(16).padStart(2, "0")}`;
    at += 1;
    start = at;
  }
  return text + Buffer.from(bytes.subarray(start)).toString("utf8");
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes, never ending inside a character. */
export function bytePrefix(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  // Decoding a byte prefix may end inside a character; the replacement it leaves is dropped.
  return Buffer.from(text.slice(0, bytes)).subarray(0, bytes).toString("utf8").replace(/\uFFFD$/, "");
}
