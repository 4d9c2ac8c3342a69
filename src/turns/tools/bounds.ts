import { humanSize } from "../../json/index.js";
import { MAX_TOOL_RESULT_BYTES } from "../limits.js";

/**
 * `text` cut to MAX_TOOL_RESULT_BYTES (on a character boundary) with a note saying how much was left
 * out; and whether it was cut. `total` is the byte count `text` stands for when some of it was never
 * kept (GatheredText); the note counts every byte of it that is not shown.
 */
export function boundToolText(text: string, limit: number = MAX_TOOL_RESULT_BYTES, total: number = Buffer.byteLength(text)): { text: string; truncated: boolean } {
  if (total <= limit) return { text, truncated: false };
  const note = (dropped: number) => `\n[albedo: ${humanSize(dropped)} more left out: tool results are cut at ${humanSize(limit)}; print less, or write it to a file and read parts]`;
  const kept = bytePrefix(text, Math.max(0, limit - Buffer.byteLength(note(total))));
  return { text: kept + note(total - Buffer.byteLength(kept)), truncated: true };
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes, never ending inside a character. */
function bytePrefix(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  // Decoding a byte prefix may end inside a character; the replacement it leaves is dropped.
  return Buffer.from(text.slice(0, bytes)).subarray(0, bytes).toString("utf8").replace(/\uFFFD$/, "");
}

/**
 * Text gathered as it arrives, keeping at most `limit` bytes and counting the rest without keeping
 * it: a cell that prints hundreds of megabytes costs the daemon `limit` bytes, not the print.
 */
export class GatheredText {
  private readonly parts: string[] = [];
  private kept = 0;
  /** UTF-8 bytes of everything added, kept or not. */
  bytes = 0;

  constructor(private readonly limit: number = MAX_TOOL_RESULT_BYTES) {}

  add(text: string): void {
    const size = Buffer.byteLength(text);
    this.bytes += size;
    if (this.kept >= this.limit) return;
    if (size <= this.limit - this.kept) {
      this.parts.push(text);
      this.kept += size;
      return;
    }
    // Cut once: nothing after a cut is kept, so what is kept never has a hole in it.
    this.parts.push(bytePrefix(text, this.limit - this.kept));
    this.kept = this.limit;
  }

  /** What was kept, in order. */
  get text(): string {
    return this.parts.join("");
  }
}
