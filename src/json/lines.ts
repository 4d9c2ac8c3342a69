import { Transform, type TransformCallback } from "node:stream";

/** A line longer than its bound: the stream ends with this error, and nothing of the line is passed on. */
export class LineTooLong extends Error {
  override readonly name = "LineTooLong";
  constructor(readonly maxBytes: number) {
    super(`a line over ${maxBytes} bytes arrived`);
  }
}

/**
 * Passes a byte stream on as whole lines, one chunk per line with its newline, scanning each byte
 * once: a reader that joins chunks until it sees a newline (as the MCP SDKs' stdio buffers do,
 * copying and scanning what it holds on every chunk) then joins once per line, so a message of n
 * bytes costs O(n), not O(n²). A line over `maxBytes` ends the stream with LineTooLong before
 * more than `maxBytes` of it is held. Text after the last newline is passed on at the end.
 */
export class LineFrames extends Transform {
  private parts: Buffer[] = [];
  private held = 0;

  constructor(private readonly maxBytes: number) {
    // Object mode on the readable side: a line is never merged with the next in a read.
    super({ readableObjectMode: true });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, start)) {
      if (!this.hold(chunk.subarray(start, newline + 1))) return done(new LineTooLong(this.maxBytes));
      this.push(this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.held));
      this.parts = [];
      this.held = 0;
      start = newline + 1;
    }
    if (start < chunk.length && !this.hold(chunk.subarray(start))) return done(new LineTooLong(this.maxBytes));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.held > 0) this.push(Buffer.concat(this.parts, this.held));
    done();
  }

  private hold(piece: Buffer): boolean {
    this.held += piece.length;
    if (this.held > this.maxBytes) return false;
    this.parts.push(piece);
    return true;
  }
}
