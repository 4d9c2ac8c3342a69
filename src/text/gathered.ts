import { bytePrefix } from "./utf8.js";

/**
 * Text gathered as it arrives, keeping at most `limit` bytes and counting the rest without keeping
 * it: a cell that prints hundreds of megabytes costs the daemon `limit` bytes, not the print.
 */
export class GatheredText {
  private readonly parts: string[] = [];
  private kept = 0;
  /** UTF-8 bytes of everything added, kept or not. */
  bytes = 0;

  constructor(private readonly limit: number) {}

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
