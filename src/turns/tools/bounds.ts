import { humanSize } from "../../json/index.js";
import { bytePrefix } from "../../text/index.js";
import { MAX_TOOL_RESULT_BYTES } from "../limits.js";

/**
 * `text` cut to MAX_TOOL_RESULT_BYTES (on a character boundary) with a note saying how much was left
 * out; and whether it was cut. `total` is the byte count `text` stands for when some of it was never
 * kept (the text domain's GatheredText); the note counts every byte of it that is not shown.
 */
export function boundToolText(text: string, limit: number = MAX_TOOL_RESULT_BYTES, total: number = Buffer.byteLength(text)): { text: string; truncated: boolean } {
  if (total <= limit) return { text, truncated: false };
  const note = (dropped: number) => `\n[albedo: ${humanSize(dropped)} more left out: tool results are cut at ${humanSize(limit)}; print less, or write it to a file and read parts]`;
  const kept = bytePrefix(text, Math.max(0, limit - Buffer.byteLength(note(total))));
  return { text: kept + note(total - Buffer.byteLength(kept)), truncated: true };
}
