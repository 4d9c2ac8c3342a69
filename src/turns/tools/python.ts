/** The `python` tool (O-3): model-written code runs in the session's kernel; what it printed comes back, bounded. */
import { z } from "zod";
import type { ExecuteOutput } from "../../kernel/index.js";
import { TURN_INTERRUPT_TIMEOUT_MS } from "../limits.js";
import { alreadyLoadedNote } from "../pulls.js";
import { boundToolText } from "./bounds.js";
import type { Tool, ToolContext } from "./tool.js";

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

const schema = z.object({ code: z.string().min(1).describe("Python to run in the session's kernel; top-level await works") }).strict();

/** Thrown when an interrupt ended the cell: the turn ends as interrupted. */
export class TurnInterrupted extends Error {
  override readonly name = "TurnInterrupted";
}

export const pythonTool: Tool<z.infer<typeof schema>> = {
  name: "python",
  description:
    "Run Python in the session's kernel (IPython; state persists between calls; `skills` and `commands` are defined). " +
    "Returns what it printed, the value of the last expression, and the error if one was raised.",
  schema,
  async run({ code }, context) {
    context.emit({ kind: "code", code });
    const observing = context.host.observeActivations((entry, activation) =>
      context.ledger.pull(entry, "python", activation.instructions) ? { ...activation, instructions: alreadyLoadedNote(entry.name) } : activation,
    );
    try {
      const { text, status } = await execute(code, context);
      const bounded = boundToolText(text);
      context.emit({ kind: "output", text: bounded.text, status, truncated: bounded.truncated });
      return bounded.text;
    } finally {
      observing.dispose();
    }
  },
};

/** Runs the cell to its end, or interrupts it when the turn is; returns its outputs as one text. */
async function execute(code: string, context: ToolContext): Promise<{ text: string; status: "ok" | "error" }> {
  if (context.signal.aborted) throw new TurnInterrupted("the turn was interrupted before the cell ran");
  const future = context.host.execute(code);
  const parts: string[] = [];
  const listening = future.onOutput((output) => {
    const text = describeOutput(output);
    if (text !== undefined) parts.push(text);
  });
  // On an interrupt: interrupt the cell, and stop waiting for it TURN_INTERRUPT_TIMEOUT_MS later if it does not end.
  let giveUp!: () => void;
  const abandoned = new Promise<void>((resolve) => (giveUp = resolve));
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    void context.host.interrupt().catch(() => undefined);
    timer = setTimeout(giveUp, TURN_INTERRUPT_TIMEOUT_MS);
  };
  context.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const reply = await Promise.race([future.done, abandoned.then(() => ({ status: "error" as const }))]);
    if (context.signal.aborted) throw new TurnInterrupted("the cell was interrupted");
    const text = parts.join("").replace(ANSI, "");
    return { text: text.length > 0 ? text : "(no output)", status: reply.status === "ok" ? "ok" : "error" };
  } finally {
    clearTimeout(timer);
    listening.dispose();
    context.signal.removeEventListener("abort", onAbort);
  }
}

/** One output as the model reads it; undefined for outputs that carry nothing to read. */
function describeOutput(output: ExecuteOutput): string | undefined {
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
