import { humanSize } from "../../json/index.js";
import { MAX_TOOL_RESULT_BYTES } from "../limits.js";

/** `text` cut to MAX_TOOL_RESULT_BYTES (on a character boundary) with a note saying how much was left out; and whether it was cut. */
export function boundToolText(text: string, limit: number = MAX_TOOL_RESULT_BYTES): { text: string; truncated: boolean } {
  const bytes = Buffer.byteLength(text);
  if (bytes <= limit) return { text, truncated: false };
  const note = (dropped: number) => `\n[albedo: ${humanSize(dropped)} more left out: tool results are cut at ${humanSize(limit)}; print less, or write it to a file and read parts]`;
  const room = Math.max(0, limit - Buffer.byteLength(note(bytes)));
  // Decoding a byte prefix may end inside a character; the replacement it leaves is dropped.
  const kept = Buffer.from(text).subarray(0, room).toString("utf8").replace(/\uFFFD$/, "");
  return { text: kept + note(bytes - Buffer.byteLength(kept)), truncated: true };
}
