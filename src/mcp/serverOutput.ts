/**
 * What a server writes besides its messages (its stderr, lines on stdout that are not JSON-RPC),
 * taken to the log bounded (B): each line cut, at most MCP_STDERR_MAX_LINES lines and
 * MCP_STDERR_MAX_BYTES per MCP_STDERR_WINDOW_MS (the rest counted in one line), every line
 * redacted. The last lines are kept for the diagnostic of a server that failed.
 */
import { StringDecoder } from "node:string_decoder";
import type { Log } from "../platform/index.js";
import { MCP_STDERR_LINE_MAX_CHARS, MCP_STDERR_MAX_BYTES, MCP_STDERR_MAX_LINES, MCP_STDERR_TAIL_LINES, MCP_STDERR_WINDOW_MS } from "./limits.js";
import type { Redactor } from "./redact.js";

export interface ServerOutputOptions {
  readonly log: Log;
  readonly server: string;
  readonly redactor: Redactor;
  /** Names the stream in log lines: "stderr", "stdout". */
  readonly stream: string;
}

export class ServerOutput {
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";
  /** The current line is past MCP_STDERR_LINE_MAX_CHARS: the rest of it is dropped. */
  private overlong = false;
  private readonly last: string[] = [];
  private windowStart = 0;
  private windowLines = 0;
  private windowBytes = 0;
  private suppressed = 0;

  constructor(private readonly options: ServerOutputOptions) {}

  /** Takes a chunk of the stream; complete lines are logged (within the budget) and kept in the tail. */
  write(chunk: Buffer): void {
    const parts = this.decoder.write(chunk).split("\n");
    for (let i = 0; i < parts.length; i++) {
      this.append(parts[i]!);
      if (i < parts.length - 1) this.endLine();
    }
  }

  /** Logs one line that arrived whole (a stdout line that was not a message). */
  line(text: string): void {
    this.append(text);
    this.endLine();
  }

  /** The last MCP_STDERR_TAIL_LINES lines, redacted and cut. */
  tail(): readonly string[] {
    return [...this.last];
  }

  /** Ends the stream: a last line without a newline is logged, and the count of lines held back. */
  flush(): void {
    this.append(this.decoder.end());
    if (this.partial.length > 0) this.endLine();
    this.reportSuppressed();
  }

  private append(text: string): void {
    if (this.overlong) return;
    const room = MCP_STDERR_LINE_MAX_CHARS - this.partial.length;
    if (text.length > room) {
      this.partial += text.slice(0, room);
      this.overlong = true;
    } else {
      this.partial += text;
    }
  }

  private endLine(): void {
    const raw = this.partial.replace(/\r$/, "");
    const line = this.options.redactor.quote(raw, MCP_STDERR_LINE_MAX_CHARS, this.overlong);
    this.partial = "";
    this.overlong = false;
    if (line.length === 0) return;
    this.last.push(line);
    if (this.last.length > MCP_STDERR_TAIL_LINES) this.last.shift();
    if (this.admit(Buffer.byteLength(line))) this.options.log("info", `mcp ${this.options.server} ${this.options.stream}: ${line}`, { server: this.options.server });
  }

  /** Whether a line of `bytes` fits this window's budget; a new window first reports what the last one held back. */
  private admit(bytes: number): boolean {
    const now = Date.now();
    if (now - this.windowStart >= MCP_STDERR_WINDOW_MS) {
      this.reportSuppressed();
      this.windowStart = now;
      this.windowLines = 0;
      this.windowBytes = 0;
    }
    if (this.windowLines >= MCP_STDERR_MAX_LINES || this.windowBytes + bytes > MCP_STDERR_MAX_BYTES) {
      this.suppressed += 1;
      return false;
    }
    this.windowLines += 1;
    this.windowBytes += bytes;
    return true;
  }

  private reportSuppressed(): void {
    if (this.suppressed === 0) return;
    const { server, stream } = this.options;
    this.options.log("warn", `mcp ${server} ${stream}: ${this.suppressed} more lines not logged (at most MCP_STDERR_MAX_LINES = ${MCP_STDERR_MAX_LINES} lines and MCP_STDERR_MAX_BYTES = ${MCP_STDERR_MAX_BYTES} bytes per ${MCP_STDERR_WINDOW_MS} ms)`, {
      server,
      suppressed: this.suppressed,
    });
    this.suppressed = 0;
  }
}
