/** The `python` tool (O-3): model-written code runs in the session's kernel; what it printed comes back, bounded. */
import { z } from "zod";
import { CELL_INTERRUPT_GRACE_MS, NO_OUTPUT, runCell, type CellRun } from "../../session/index.js";
import { imagesFollowLine, resultImages } from "../images.js";
import { MAX_TOOL_RESULT_BYTES } from "../limits.js";
import { NetworkStep } from "../network.js";
import { alreadyLoadedNote } from "../pulls.js";
import { boundToolText } from "./bounds.js";
import type { Tool, ToolContext } from "./tool.js";

const schema = z.object({ code: z.string().min(1).describe("Python to run in the session's kernel; top-level await works") }).strict();

/**
 * Thrown when an interrupt ended the turn: the turn ends as interrupted. `result` is what the model
 * is told of a call that was under way (it ran, at least in part); `notice` is said to the person
 * beside "interrupted" when there is more to know (a cell still running in the kernel).
 */
export class TurnInterrupted extends Error {
  override readonly name = "TurnInterrupted";

  constructor(message: string, readonly result?: string, readonly notice?: string) {
    super(message);
  }
}

export const pythonTool: Tool<z.infer<typeof schema>> = {
  name: "python",
  description:
    "Run Python in the session's kernel (IPython; state persists between calls; `skills` and `commands` are defined). " +
    "Returns what it printed, the value of the last expression, and the error if one was raised.",
  schema,
  async run({ code }, context) {
    context.emit({ kind: "code", code });
    // Each host the cell reached draws its row (N-4) once the cell ended, before its output.
    const network = new NetworkStep(context.host.network?.egress);
    const observing = context.host.skills.observe((entry, activation) =>
      context.ledger.pull(entry, "python", activation.instructions) ? { ...activation, instructions: alreadyLoadedNote(entry.name) } : activation,
    );
    try {
      if (context.signal.aborted) throw new TurnInterrupted("the turn was interrupted before the cell ran");
      const cell = await runCell(context.host.kernel, code, { signal: context.signal, textBytes: MAX_TOOL_RESULT_BYTES });
      for (const row of await network.finish()) context.emit(row);
      if (cell.stopped !== undefined) throw interrupted(cell, context.emit);
      const { text, bytes, status, images, notes } = cell;
      const printed = text.length > 0 || !cell.showedImages ? boundToolText(text.length > 0 ? text : NO_OUTPUT, undefined, text.length > 0 ? bytes : undefined) : { text: "", truncated: false };
      // The notes come after the cut, so a cell that printed too much still says which images were dropped.
      const shown = joinLines(printed.text, ...notes);
      // Kept for people (I-3): one the store refuses is a note on the row; the model still receives it.
      const kept = (await context.host.images?.keepAll(images)) ?? { refs: [], notes: [], each: [] };
      context.emit({ kind: "output", text: joinLines(shown, ...kept.notes), truncated: printed.truncated, status, ...(kept.refs.length > 0 ? { images: kept.refs } : {}) });
      if (images.length === 0) return shown;
      // The conversation keeps the references; the turn's next request takes the bytes from here, a later turn's from the store.
      return { text: joinLines(shown, imagesFollowLine(images.length)), ...resultImages(images, kept.each) };
    } finally {
      observing.dispose();
      // A cell that never ended (the kernel died) still shows what it reached.
      for (const row of network.end()) context.emit(row);
    }
  },
};

/** The non-empty parts, one a line: a part that already ends its line is not given another newline. */
function joinLines(...parts: string[]): string {
  return parts.filter((part) => part !== "").reduce((joined, part) => (joined === "" || joined.endsWith("\n") ? joined + part : `${joined}\n${part}`), "");
}

/**
 * The TurnInterrupted of a cell the turn's interrupt reached after it was sent: the model is told it
 * ran until then (its effects so far are real) and what it printed, which is also a failed cell's
 * output row; when it is still running, both the model and the person are told the next cell waits
 * for it.
 */
function interrupted(cell: CellRun, emit: ToolContext["emit"]): TurnInterrupted {
  const { text: printed, bytes: printedBytes, interruptRefused: refused } = cell;
  if (printed.length > 0) emit({ kind: "output", ...boundToolText(printed, undefined, printedBytes), status: "error" });
  const why = refused === undefined ? "" : `the kernel could not be interrupted (${refused}); `;
  const still = cell.stillRunning
    ? `${why}the cell was still running ${CELL_INTERRUPT_GRACE_MS / 1000} s after the interrupt and runs on in the kernel; the next python call waits for it to end`
    : undefined;
  const head = `Interrupted by the user while it ran${still === undefined ? "" : `: ${still}`}. Whatever it did before then took effect.`;
  const framed = printed.length > 0 ? `${head}\nIts output until then:\n${printed}` : `${head}\nIt printed nothing.`;
  const result = boundToolText(framed, undefined, Buffer.byteLength(framed) - Buffer.byteLength(printed) + printedBytes).text;
  return new TurnInterrupted(still ?? "the cell was interrupted", result, still);
}
