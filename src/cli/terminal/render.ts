import type { ExecuteOutput, ExecuteReply } from "../../kernel/index.js";
import { stripAnsi, visibleControls } from "../../text/index.js";

/** Where rendered output goes. */
export interface OutputSink {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Removes terminal colour codes (tracebacks carry them) when the stream is not a terminal. */
export function plain(text: string, stream: { isTTY?: boolean }): string {
  return stream.isTTY ? text : stripAnsi(text);
}

function withNewline(text: string): string {
  return text.endsWith("\n") || text.length === 0 ? text : `${text}\n`;
}

/** Writes one kernel output the way a terminal user expects: streams as-is, results as text/plain, errors as tracebacks. */
export function renderOutput(output: ExecuteOutput, sink: OutputSink): void {
  switch (output.header.msg_type) {
    case "stream": {
      const content = (output as { content: { name: string; text: string } }).content;
      const stream = content.name === "stderr" ? sink.stderr : sink.stdout;
      stream.write(content.text);
      return;
    }
    case "execute_result":
    case "display_data":
    case "update_display_data": {
      const data = (output.content as { data?: Record<string, unknown> }).data ?? {};
      const text = data["text/plain"];
      if (typeof text === "string") sink.stdout.write(withNewline(plain(text, sink.stdout)));
      else if (Object.keys(data).length > 0) sink.stdout.write(`[${Object.keys(data).join(", ")}]\n`);
      return;
    }
    case "error": {
      const content = output.content as { ename: string; evalue: string; traceback?: string[] };
      const text = content.traceback && content.traceback.length > 0 ? content.traceback.join("\n") : `${content.ename}: ${content.evalue}`;
      sink.stderr.write(withNewline(plain(text, sink.stderr)));
      return;
    }
    default:
      return;
  }
}

/**
 * The pages a reply carries: IPython answers `obj?` and `%magic?` with a "page" payload on the
 * execute_reply instead of an output, which a terminal front end must print itself.
 */
export function pageTexts(reply: ExecuteReply): string[] {
  const payload = (reply as { payload?: unknown }).payload;
  if (!Array.isArray(payload)) return [];
  return (payload as { source?: unknown; data?: Record<string, unknown> }[]).flatMap((item) => {
    const text = item.source === "page" ? item.data?.["text/plain"] : undefined;
    return typeof text === "string" ? [text] : [];
  });
}

/** Writes pages (see pageTexts) to stdout, colour codes kept only for a terminal. */
export function renderPages(pages: readonly string[], sink: OutputSink): void {
  for (const text of pages) sink.stdout.write(withNewline(plain(text, sink.stdout)));
}

/** The line a terminal prints when the kernel came back from its checkpoint (K-15). */
export function restoredLine(summary: string): string {
  return `albedo: the kernel restarted and was restored from its checkpoint: ${visibleControls(summary)}`;
}
