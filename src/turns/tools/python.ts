/** The `python` tool (O-3): model-written code runs in the session's kernel; what it printed comes back, bounded. */
import { z } from "zod";
import { collectImages, keepImageBundle } from "../../images/index.js";
import type { ExecuteOutput } from "../../kernel/index.js";
import { imagesFollowLine } from "../images.js";
import { TURN_INTERRUPT_TIMEOUT_MS } from "../limits.js";
import { alreadyLoadedNote } from "../pulls.js";
import { boundToolText, GatheredText } from "./bounds.js";
import type { Tool, ToolContext } from "./tool.js";

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;
/** The result of a cell that printed nothing. */
const NO_OUTPUT = "(no output)";

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
    const observing = context.host.skills.observe((entry, activation) =>
      context.ledger.pull(entry, "python", activation.instructions) ? { ...activation, instructions: alreadyLoadedNote(entry.name) } : activation,
    );
    try {
      const { text, bytes, status, bundles } = await execute(code, context);
      const { images, notes } = await collectImages(bundles);
      const printed = text.length > 0 || bundles.length === 0 ? boundToolText(text.length > 0 ? text : NO_OUTPUT, undefined, text.length > 0 ? bytes : undefined) : { text: "", truncated: false };
      // The notes come after the cut, so a cell that printed too much still says which images were dropped.
      const shown = joinLines(printed.text, ...notes);
      // Kept for people (I-3): one the store refuses is a note on the row; the model still receives it.
      const kept = (await context.host.images?.keepAll(images)) ?? { refs: [], notes: [] };
      context.emit({ kind: "output", text: joinLines(shown, ...kept.notes), truncated: printed.truncated, status, ...(kept.refs.length > 0 ? { images: kept.refs } : {}) });
      if (images.length === 0) return shown;
      return { text: joinLines(shown, imagesFollowLine(images.length)), images };
    } finally {
      observing.dispose();
    }
  },
};

/** The non-empty parts, one a line: a part that already ends its line is not given another newline. */
function joinLines(...parts: string[]): string {
  return parts.filter((part) => part !== "").reduce((joined, part) => (joined === "" || joined.endsWith("\n") ? joined + part : `${joined}\n${part}`), "");
}

/** Runs the cell to its end, or interrupts it when the turn is; returns its outputs as one text. */
async function execute(code: string, context: ToolContext): Promise<{ text: string; bytes: number; status: "ok" | "error"; bundles: unknown[] }> {
  if (context.signal.aborted) throw new TurnInterrupted("the turn was interrupted before the cell ran");
  const future = context.host.kernel.execute(code);
  const gathered = new GatheredText();
  const bundles: unknown[] = [];
  const listening = future.onOutput((output) => {
    // An image goes to the model as an image (I-2): its text/plain stand-in ("<…Image object>") would only be noise.
    if ((output.header.msg_type === "display_data" || output.header.msg_type === "execute_result") && keepImageBundle(bundles, (output.content as { data?: unknown }).data)) return;
    const text = describeOutput(output);
    if (text !== undefined) gathered.add(text.replace(ANSI, ""));
  });
  // On an interrupt: interrupt the cell, and stop waiting for it TURN_INTERRUPT_TIMEOUT_MS later if it does not end.
  let giveUp!: () => void;
  const abandoned = new Promise<void>((resolve) => (giveUp = resolve));
  let timer: NodeJS.Timeout | undefined;
  let refused: string | undefined;
  const onAbort = () => {
    context.host.kernel.interrupt().catch((error: unknown) => void (refused = error instanceof Error ? error.message : String(error)));
    timer = setTimeout(giveUp, TURN_INTERRUPT_TIMEOUT_MS);
  };
  context.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const reply = await Promise.race([future.done, abandoned.then(() => undefined)]);
    const text = gathered.text;
    const bytes = gathered.bytes;
    if (context.signal.aborted) {
      // What it printed before the interrupt is part of the transcript, as a failed cell's output.
      if (text.length > 0) context.emit({ kind: "output", ...boundToolText(text, undefined, bytes), status: "error" });
      throw interrupted(text, bytes, reply === undefined, refused);
    }
    const status = reply?.status === "ok" ? "ok" : "error";
    return { text, bytes, status, bundles };
  } finally {
    clearTimeout(timer);
    listening.dispose();
    context.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * The TurnInterrupted of a cell the turn's interrupt reached after it was sent: the model is told it
 * ran until then (its effects so far are real) and what it printed; when it is still running
 * (`abandoned`), both the model and the person are told the next cell waits for it.
 */
function interrupted(printed: string, printedBytes: number, abandoned: boolean, refused: string | undefined): TurnInterrupted {
  const why = refused === undefined ? "" : `the kernel could not be interrupted (${refused}); `;
  const still = abandoned
    ? `${why}the cell was still running ${TURN_INTERRUPT_TIMEOUT_MS / 1000} s after the interrupt and runs on in the kernel; the next python call waits for it to end`
    : undefined;
  const head = `Interrupted by the user while it ran${still === undefined ? "" : `: ${still}`}. Whatever it did before then took effect.`;
  const framed = printed.length > 0 ? `${head}\nIts output until then:\n${printed}` : `${head}\nIt printed nothing.`;
  const result = boundToolText(framed, undefined, Buffer.byteLength(framed) - Buffer.byteLength(printed) + printedBytes).text;
  return new TurnInterrupted(still ?? "the cell was interrupted", result, still);
}

/** One output as the model reads it; undefined for outputs that carry nothing to read. */
export function describeOutput(output: ExecuteOutput): string | undefined {
  const content = output.content as Record<string, unknown>;
  switch (output.header.msg_type) {
    case "stream":
      return String(content.text ?? "");
    case "execute_result":
      return `${plain(content.data)}\n`;
    case "display_data":
    case "update_display_data":
      return `${plain(content.data)}\n`;
    case "error": {
      const traceback = Array.isArray(content.traceback) ? (content.traceback as string[]).join("\n") : "";
      return `${traceback || `${String(content.ename)}: ${String(content.evalue)}`}\n`;
    }
    default:
      return undefined;
  }
}

/** The text/plain form of a display bundle, or a note naming what it holds instead. */
function plain(data: unknown): string {
  const bundle = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
  if (typeof bundle["text/plain"] === "string") return bundle["text/plain"];
  return `[display: ${Object.keys(bundle).join(", ") || "empty"}]`;
}
