import { MAX_LOG_ENTRY_BYTES } from "./limits.js";
import { LogFile } from "./logFile.js";
import { RepeatFilter, type RepeatLimits } from "./logRepeats.js";
import type { Log, LogLevel } from "../platform/index.js";

/** What `GET /health` says about the log. */
export interface LogStats {
  /** The log file, or null when entries go to stderr. */
  readonly file: string | null;
  /** Writes that failed (log entries, and lines for stdout or stderr) since the daemon started. */
  readonly dropped_writes: number;
  /** The error of the latest failed write (`ENOSPC`, `EPIPE`...), or null. */
  readonly last_error: string | null;
  /** Entries not written because their message repeated more than MAX_LOG_REPEATS times in a window. */
  readonly suppressed_entries: number;
}

export interface DaemonLogOptions {
  /** Append entries to this file, rotated by size; without it they go to `stream`. */
  readonly file?: string;
  /** Where entries go when there is no file (stderr). */
  readonly stream: NodeJS.WritableStream;
  readonly now?: () => number;
  readonly repeats?: RepeatLimits;
}

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 };
/** The file gets info and up; a terminal only warnings and errors, as `albedo serve` always printed. */
const FILE_LEVEL: LogLevel = "info";
const STREAM_LEVEL: LogLevel = "warn";

/**
 * The daemon's log: timestamped entries to a rotating file or to stderr, repeats of one message
 * summed up, and no write that can throw or crash the process — a failure is counted (see
 * `stats`) and the entry dropped. Once writing works again the log says how many were lost.
 */
export class DaemonLog {
  private dropped = 0;
  private droppedUnreported = 0;
  private lastError: string | undefined;
  private suppressed = 0;
  private readonly file: LogFile | undefined;
  private readonly repeats: RepeatFilter;
  private readonly now: () => number;

  constructor(private readonly options: DaemonLogOptions) {
    this.now = options.now ?? Date.now;
    this.file = options.file === undefined ? undefined : new LogFile(options.file, (error) => this.countDropped(error));
    this.repeats = new RepeatFilter((key, count) => {
      this.suppressed += count;
      this.write("warn", `log: ${count} more entries "${key}" in the last minute were not written`);
    }, options.repeats);
  }

  /** The logger the daemon's parts call. Never throws. */
  readonly log: Log = (level, message, data) => {
    if (RANK[level] < RANK[this.file ? FILE_LEVEL : STREAM_LEVEL]) return;
    if (!this.repeats.admit(`${level} ${message}`.slice(0, MAX_LOG_ENTRY_BYTES))) return;
    this.write(level, message, data);
  };

  /** Writes a line to stdout or stderr, counting a failure (EPIPE, ENOSPC) instead of throwing. */
  print(stream: NodeJS.WritableStream, text: string): void {
    try {
      stream.write(text, (error) => error && this.countDropped(error));
    } catch (error) {
      this.countDropped(error);
    }
  }

  /**
   * Keeps a broken stdout or stderr (a reader that went away, a full disk) from crashing the
   * process: without a listener its 'error' event is an uncaught exception. Writes through
   * `print` and `log` are counted by their own callbacks.
   */
  guard(stream: NodeJS.WritableStream): void {
    stream.on("error", () => undefined);
  }

  /** True when entries go to a file rather than stderr. */
  get writesFile(): boolean {
    return this.file !== undefined;
  }

  stats(): LogStats {
    return { file: this.file?.path ?? null, dropped_writes: this.dropped, last_error: this.lastError ?? null, suppressed_entries: this.suppressed };
  }

  /** Writes what repeats were held back and closes the file. */
  close(): void {
    this.repeats.flush();
    this.file?.close();
  }

  private write(level: LogLevel, message: string, data?: Readonly<Record<string, unknown>>): void {
    const text = entry(this.now(), level, message, data);
    if (this.file === undefined) return this.print(this.options.stream, text);
    const lost = this.droppedUnreported;
    // The note rides in the same write as the entry: one write, one count if it fails too.
    const note = lost > 0 ? entry(this.now(), "warn", `log: ${lost} writes failed and were dropped (last error: ${this.lastError})`) : "";
    if (this.file.append(note + text)) this.droppedUnreported -= lost;
  }

  private countDropped(error: unknown): void {
    this.dropped += 1;
    this.droppedUnreported += 1;
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
    // A stream refuses writes after its first error; that first one (EPIPE, ENOSPC) says why.
    if (code !== "ERR_STREAM_DESTROYED" || this.lastError === undefined) this.lastError = code;
  }
}

/** One entry: `ISO-TIME LEVEL message {data}` and a newline. Continuation lines are indented so no message can forge an entry; cut at MAX_LOG_ENTRY_BYTES. */
export function entry(now: number, level: LogLevel, message: string, data?: Readonly<Record<string, unknown>>): string {
  let text = `${new Date(now).toISOString()} ${level} ${message.replace(/\r?\n|\r/g, "\n    ")}${data === undefined ? "" : ` ${json(data)}`}`;
  if (Buffer.byteLength(text) > MAX_LOG_ENTRY_BYTES) {
    const note = ` … (cut at MAX_LOG_ENTRY_BYTES, ${MAX_LOG_ENTRY_BYTES})`;
    text = Buffer.from(text).subarray(0, MAX_LOG_ENTRY_BYTES - Buffer.byteLength(note)).toString("utf8").replace(/\uFFFD$/, "") + note;
  }
  return `${text}\n`;
}

function json(data: Readonly<Record<string, unknown>>): string {
  try {
    return JSON.stringify(data);
  } catch {
    return String(data);
  }
}
