/**
 * One cell run to its end for a caller (the turns' `python` tool, albedo's MCP server, the
 * daemon's execute route): its text (stdout, stderr, results and tracebacks in order, terminal
 * escapes removed, bounded as it arrives), its images checked (I-1), and how it ended. A cell is
 * interrupted when the caller's signal aborts or its deadline passes, and given
 * CELL_INTERRUPT_GRACE_MS to end before the run answers that it still runs.
 */
import { collectImages, keepImageBundle, type CheckedImage } from "../images/index.js";
import { kernelMessages, type ExecuteFuture, type ExecuteOutput, type ExecuteReply } from "../kernel/index.js";
import { GatheredText } from "../text/index.js";
import { CELL_INTERRUPT_GRACE_MS } from "./limits.js";

/** What a cell of a caller printed when it printed nothing. */
export const NO_OUTPUT = "(no output)";

/** Terminal escapes (IPython colours its tracebacks); a model or a client reads the text without them. */
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

/** Where a cell runs: the session's kernel, of whose execution the runner uses its outputs, its end and its cut bytes. */
export interface CellKernel {
  execute(code: string): Pick<ExecuteFuture, "onOutput" | "done" | "cutOutputBytes">;
  interrupt(): Promise<void>;
}

export interface CellOptions {
  /** Aborting it interrupts the cell: the run is `stopped: "interrupted"` and checks no images (nobody waits for them). */
  readonly signal?: AbortSignal;
  /** Past this many milliseconds the cell is interrupted: the run is `stopped: "timed_out"`. */
  readonly timeoutMs?: number;
  /** Bytes of the cell's text kept (the rest is counted in `bytes`); no text is gathered without it. */
  readonly textBytes?: number;
  /** Each output as it arrives, cut to the kernel client's bound. */
  readonly onOutput?: (output: ExecuteOutput) => void;
  /** Told the cell's whole seconds so far every `everyMs` while it runs. */
  readonly progress?: { readonly everyMs: number; readonly report: (seconds: number) => void };
}

/** How a cell ended, with what it printed and showed. */
export interface CellRun {
  /** The kernel's reply; undefined when the cell still ran CELL_INTERRUPT_GRACE_MS after its interrupt. */
  readonly reply: ExecuteReply | undefined;
  /** "ok" when the reply says so; "error" for an error, an abort, or no reply. */
  readonly status: "ok" | "error";
  /** Why the cell was interrupted, when it was. */
  readonly stopped?: "interrupted" | "timed_out";
  /** The cell outlived its interrupt's grace and runs on in the kernel; the next cell waits for it. */
  readonly stillRunning: boolean;
  /** Why the kernel could not be interrupted, when it could not. */
  readonly interruptRefused?: string;
  /** The text kept, at most `textBytes`. */
  readonly text: string;
  /** UTF-8 bytes of all the text, kept or not. */
  readonly bytes: number;
  /** Whether a display bundle held an image: its text/plain stand-in ("<…Image object>") is then left out of the text. */
  readonly showedImages: boolean;
  readonly images: readonly CheckedImage[];
  /** One line per image shown but not kept. */
  readonly notes: readonly string[];
  /** Bytes cut from outputs over the kernel client's bound (each cut output says so itself). */
  readonly cutOutputBytes: number;
}

/** Runs `code` on `kernel` to its end (or its interrupt's grace); rejects when the kernel dies or stops under it. */
export async function runCell(kernel: CellKernel, code: string, options: CellOptions = {}): Promise<CellRun> {
  const started = Date.now();
  const future = kernel.execute(code);
  const gathered = options.textBytes === undefined ? undefined : new GatheredText(options.textBytes);
  const bundles: unknown[] = [];
  const listening = future.onOutput((output) => {
    options.onOutput?.(output);
    if (imageBundle(output, bundles) || gathered === undefined) return;
    const text = describeOutput(output);
    if (text !== undefined) gathered.add(text.replace(ANSI, ""));
  });
  const stopping = new Stopping(kernel);
  const { signal } = options;
  const onAbort = () => stopping.stop("interrupted");
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const deadline = options.timeoutMs === undefined ? undefined : setTimeout(() => stopping.stop("timed_out"), options.timeoutMs);
  const { progress } = options;
  const ticking = progress === undefined ? undefined : setInterval(() => progress.report(Math.round((Date.now() - started) / 1000)), progress.everyMs);
  let reply: ExecuteReply | undefined;
  try {
    reply = await Promise.race([future.done, stopping.abandoned]);
  } finally {
    clearTimeout(deadline);
    clearInterval(ticking);
    stopping.dispose();
    listening.dispose();
    signal?.removeEventListener("abort", onAbort);
  }
  const { why, refused } = stopping;
  const { images, notes } = why === "interrupted" ? { images: [], notes: [] } : await collectImages(bundles);
  return {
    reply,
    status: reply?.status === "ok" && why === undefined ? "ok" : "error",
    ...(why === undefined ? {} : { stopped: why }),
    stillRunning: reply === undefined,
    ...(refused === undefined ? {} : { interruptRefused: refused }),
    text: gathered?.text ?? "",
    bytes: gathered?.bytes ?? 0,
    showedImages: bundles.length > 0,
    images,
    notes,
    cutOutputBytes: future.cutOutputBytes,
  };
}

/** A cell's interrupt, once: the kernel is interrupted, and `abandoned` settles CELL_INTERRUPT_GRACE_MS later unless disposed. */
class Stopping {
  why: "interrupted" | "timed_out" | undefined;
  refused: string | undefined;
  readonly abandoned: Promise<undefined>;
  private giveUp!: () => void;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly kernel: CellKernel) {
    this.abandoned = new Promise((resolve) => (this.giveUp = () => resolve(undefined)));
  }

  stop(why: "interrupted" | "timed_out"): void {
    if (this.why !== undefined) return;
    this.why = why;
    this.kernel.interrupt().catch((error: unknown) => void (this.refused = error instanceof Error ? error.message : String(error)));
    this.timer = setTimeout(this.giveUp, CELL_INTERRUPT_GRACE_MS);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}

/** Keeps `output`'s display bundle for collectImages when it holds an image (true); its text is then not the cell's. */
function imageBundle(output: ExecuteOutput, bundles: unknown[]): boolean {
  const { isDisplayDataMsg, isExecuteResultMsg } = kernelMessages();
  return (isDisplayDataMsg(output) || isExecuteResultMsg(output)) && keepImageBundle(bundles, output.content.data);
}

/** One output as a reader of text sees it; undefined for outputs that carry nothing to read. */
function describeOutput(output: ExecuteOutput): string | undefined {
  const guards = kernelMessages();
  // What a kernel sends is not what its types promise: a field is read as the unknown it may be.
  if (guards.isStreamMsg(output)) {
    const text: unknown = output.content.text;
    return String(text ?? "");
  }
  if (guards.isExecuteResultMsg(output) || guards.isDisplayDataMsg(output) || guards.isUpdateDisplayDataMsg(output)) return `${plain(output.content.data)}\n`;
  if (!guards.isErrorMsg(output)) return undefined;
  const traceback: unknown = output.content.traceback;
  return `${(Array.isArray(traceback) ? traceback.join("\n") : "") || `${String(output.content.ename)}: ${String(output.content.evalue)}`}\n`;
}

/** The text/plain form of a display bundle, or a note naming what it holds instead. */
function plain(data: unknown): string {
  const bundle = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
  if (typeof bundle["text/plain"] === "string") return bundle["text/plain"];
  return `[display: ${Object.keys(bundle).join(", ") || "empty"}]`;
}
