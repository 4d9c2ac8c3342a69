/**
 * The `python` tool's cells (P-2): one at a time, in the order the calls came, at most
 * MAX_QUEUED_PYTHON_CALLS waiting. A cell answers with its text (stdout, stderr, results and the
 * traceback in order, bounded as a model's tool result is) and its images (I-1 bounds). A
 * cancelled call's cell is interrupted, or taken out of the queue before it starts; a cell past
 * its deadline is interrupted and answers so.
 */
import { AppError } from "../errors/index.js";
import { collectImages, MAX_IMAGES_PER_EXECUTION, type CheckedImage } from "../images/index.js";
import type { ExecuteOutput } from "../kernel/index.js";
import { humanSize } from "../json/index.js";
import { boundToolText, describeOutput, GatheredText } from "../turns/index.js";
import type { ServedSession } from "./host.js";
import { MAX_PYTHON_CODE_BYTES, MAX_QUEUED_PYTHON_CALLS, PYTHON_INTERRUPT_WAIT_MS, PYTHON_PROGRESS_INTERVAL_MS } from "./limits.js";

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;
/** The text of a cell that printed nothing. */
const NO_OUTPUT = "(no output)";

/** How a cell ended. */
export type CellEnd = "ok" | "error" | "interrupted" | "timed_out";

export interface CellAnswer {
  readonly end: CellEnd;
  readonly text: string;
  readonly images: readonly CheckedImage[];
}

export interface CellRequest {
  readonly code: string;
  readonly timeoutS: number;
  /** Aborted when the client cancelled the call (notifications/cancelled) or went away. */
  readonly signal: AbortSignal;
  /** Called every PYTHON_PROGRESS_INTERVAL_MS while the cell runs, with its seconds so far. */
  readonly onProgress?: (seconds: number) => void;
}

/** The cells of one served session. */
export class CellQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  constructor(private readonly session: ServedSession) {}

  /** Runs `request` after the calls before it; refuses it at once when the queue is full or the code too large. */
  run(request: CellRequest): Promise<CellAnswer> {
    const size = Buffer.byteLength(request.code);
    if (size > MAX_PYTHON_CODE_BYTES) {
      return Promise.reject(new AppError("limit_exceeded", `code is ${humanSize(size)}; a python call takes at most ${humanSize(MAX_PYTHON_CODE_BYTES)} (MAX_PYTHON_CODE_BYTES): write a file from smaller cells, or read the data from the workspace`));
    }
    if (this.waiting >= MAX_QUEUED_PYTHON_CALLS) {
      return Promise.reject(new AppError("limit_exceeded", `${this.waiting} python calls are already waiting for the kernel (MAX_QUEUED_PYTHON_CALLS = ${MAX_QUEUED_PYTHON_CALLS}); wait for their answers before sending more`));
    }
    this.waiting += 1;
    const turn = this.tail.then(() => {
      this.waiting -= 1;
      return request.signal.aborted ? ({ end: "interrupted", text: "Cancelled before it started: the cell never ran.", images: [] } as const) : this.runNow(request);
    });
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  private async runNow({ code, timeoutS, signal, onProgress }: CellRequest): Promise<CellAnswer> {
    const started = Date.now();
    const future = this.session.kernel.execute(code);
    const gathered = new GatheredText();
    const bundles: unknown[] = [];
    const listening = future.onOutput((output: ExecuteOutput) => {
      const content = output.content as { data?: unknown };
      // An image goes as image content: its text/plain stand-in ("<…Image object>") would only be noise.
      if ((output.header.msg_type === "display_data" || output.header.msg_type === "execute_result") && keepImageBundle(bundles, content.data)) return;
      const text = describeOutput(output);
      if (text !== undefined) gathered.add(text.replace(ANSI, ""));
    });
    let stopped: "interrupted" | "timed_out" | undefined;
    let giveUp!: () => void;
    const abandoned = new Promise<undefined>((resolve) => (giveUp = () => resolve(undefined)));
    let waitTimer: NodeJS.Timeout | undefined;
    const stop = (why: "interrupted" | "timed_out") => {
      if (stopped !== undefined) return;
      stopped = why;
      this.session.kernel.interrupt().catch(() => undefined);
      waitTimer = setTimeout(giveUp, PYTHON_INTERRUPT_WAIT_MS);
    };
    const onAbort = () => stop("interrupted");
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
    const deadline = setTimeout(() => stop("timed_out"), timeoutS * 1000);
    const progress = onProgress === undefined ? undefined : setInterval(() => onProgress(Math.round((Date.now() - started) / 1000)), PYTHON_PROGRESS_INTERVAL_MS);
    try {
      const reply = await Promise.race([future.done, abandoned]);
      const printed = gathered.text.length > 0 ? gathered.text : NO_OUTPUT;
      const { images, notes } = await collectImages(bundles);
      const end: CellEnd = stopped ?? (reply?.status === "ok" ? "ok" : "error");
      const head = headline(end, timeoutS, reply === undefined);
      const body = [head, printed, ...notes].filter((part) => part !== "").join("\n");
      const shown = boundToolText(body, undefined, Buffer.byteLength(body) - Buffer.byteLength(gathered.text) + gathered.bytes).text;
      return { end, text: shown, images };
    } finally {
      clearTimeout(deadline);
      clearTimeout(waitTimer);
      if (progress !== undefined) clearInterval(progress);
      listening.dispose();
      signal.removeEventListener("abort", onAbort);
    }
  }
}

/** What comes before the output of a cell that did not simply run to its end. */
function headline(end: CellEnd, timeoutS: number, stillRunning: boolean): string {
  const still = stillRunning ? ` It was still running ${PYTHON_INTERRUPT_WAIT_MS / 1000} s after the interrupt; the next python call waits for it.` : "";
  if (end === "interrupted") return `Interrupted: the call was cancelled while the cell ran; what it did until then took effect.${still} Its output until then:`;
  if (end === "timed_out") return `Timed out after ${timeoutS} s (timeout_s) and interrupted; what it did until then took effect.${still} Its output until then:`;
  return "";
}

/**
 * Keeps a display bundle that holds an image for collectImages (true), the first MAX_IMAGES_PER_EXECUTION
 * whole, later ones reduced to their kinds (collectImages only counts those), so a cell that shows
 * a thousand plots holds four while it runs.
 */
function keepImageBundle(bundles: unknown[], data: unknown): boolean {
  if (typeof data !== "object" || data === null) return false;
  const mimes = Object.keys(data).filter((mime) => mime.startsWith("image/"));
  if (mimes.length === 0) return false;
  bundles.push({ data: bundles.length < MAX_IMAGES_PER_EXECUTION ? data : Object.fromEntries(mimes.map((mime) => [mime, ""])) });
  return true;
}
