/**
 * The `python` tool's cells (P-2): one at a time, in the order the calls came, at most
 * MAX_QUEUED_PYTHON_CALLS waiting. A cell answers with its text (stdout, stderr, results and the
 * traceback in order, bounded as a model's tool result is) and its images (I-1 bounds). A
 * cancelled call's cell is interrupted, or taken out of the queue before it starts; a cell past
 * its deadline is interrupted and answers so.
 */
import { AppError } from "../errors/index.js";
import type { CheckedImage } from "../images/index.js";
import { humanSize } from "../json/index.js";
import { CELL_INTERRUPT_GRACE_MS, NO_OUTPUT, runCell } from "../session/index.js";
import { boundToolText, MAX_TOOL_RESULT_BYTES } from "../turns/index.js";
import type { ServedSession } from "./host.js";
import { MAX_PYTHON_CODE_BYTES, MAX_QUEUED_PYTHON_CALLS, PYTHON_PROGRESS_INTERVAL_MS } from "./limits.js";

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
    const cell = await runCell(this.session.kernel, code, {
      signal,
      timeoutMs: timeoutS * 1000,
      textBytes: MAX_TOOL_RESULT_BYTES,
      ...(onProgress === undefined ? {} : { progress: { everyMs: PYTHON_PROGRESS_INTERVAL_MS, report: onProgress } }),
    });
    const end: CellEnd = cell.stopped ?? cell.status;
    const head = headline(end, timeoutS, cell.stillRunning);
    const body = [head, cell.text.length > 0 ? cell.text : NO_OUTPUT, ...cell.notes].filter((part) => part !== "").join("\n");
    const shown = boundToolText(body, undefined, Buffer.byteLength(body) - Buffer.byteLength(cell.text) + cell.bytes).text;
    return { end, text: shown, images: cell.images };
  }
}

/** What comes before the output of a cell that did not simply run to its end. */
function headline(end: CellEnd, timeoutS: number, stillRunning: boolean): string {
  const still = stillRunning ? ` It was still running ${CELL_INTERRUPT_GRACE_MS / 1000} s after the interrupt; the next python call waits for it.` : "";
  if (end === "interrupted") return `Interrupted: the call was cancelled while the cell ran; what it did until then took effect.${still} Its output until then:`;
  if (end === "timed_out") return `Timed out after ${timeoutS} s (timeout_s) and interrupted; what it did until then took effect.${still} Its output until then:`;
  return "";
}
