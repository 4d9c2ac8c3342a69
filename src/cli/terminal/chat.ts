/**
 * `albedo chat` (X): talk to the model the `model` settings name. With a MESSAGE: one input, run to
 * its end, every transcript row printed, exit 0 only when the turn completed. Without: an
 * interactive chat that renders rows as they stream, with slash completion; Ctrl-C interrupts the
 * running turn, a second Ctrl-C exits.
 */
import { createInterface, type Interface } from "node:readline";
import { completeCommand } from "../../commands/index.js";
import { imageFile, imageLabel } from "../../images/index.js";
import { MODEL_MODES, sumUsage, usageLine, type ModelMode, type UsageTotals } from "../../model/index.js";
import { jsonWithoutControls, textColumns, visibleControls } from "../../text/index.js";
import type { StoredRow, TurnEnd } from "../../turns/index.js";
import { stringOption, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { openTerminalSession, type ChatResult, type TerminalSession } from "./terminalSession.js";
import { interruptRunning } from "./interrupt.js";
import { completeTabOnlyReads, discardLine } from "./lineEditor.js";
import { JSON_OPTION, SANDBOX_OPTION, WORKSPACE_OPTION, type CliCommand, type CliIO } from "../plumbing/command.js";
import { startProgress, type ProgressDone } from "./progress.js";
import { stateDir } from "../../platform/index.js";

/** What the chat shows, with the seconds so far, while a python call runs. */
const PYTHON_RUNNING = "python: running (Ctrl-C interrupts)";
/** Exit status of a one-shot chat whose turn did not complete. */
const EXIT_TURN_NOT_COMPLETED = 1;

/**
 * A row as a person reads it; undefined for rows already shown as they streamed. An output's
 * images are one label each with the file they were kept in under `stateDir` (I-3).
 */
export function renderRow(row: StoredRow, streamedProse: boolean, stateDir?: string): string | undefined {
  switch (row.kind) {
    case "user":
      return streamedProse ? undefined : `› ${row.text}`;
    case "assistant":
      return streamedProse ? undefined : row.text;
    case "code":
      return `python:\n${indent(row.code)}`;
    case "output": {
      const images = (row.images ?? []).map((image, index) => `${imageLabel(index + 1, image)}${stateDir === undefined ? "" : ` ${imageFile(stateDir, image.id, image.mime)}`}`);
      return indent([row.text.replace(/\n$/, ""), ...images].filter((line) => line !== "").join("\n"));
    }
    case "skill":
      return row.already_loaded ? `${row.text} (already loaded)` : row.text;
    case "mcp":
    case "network":
      return row.text;
    case "notice":
      return `[${row.text}]`;
    case "error":
      return `error: ${row.text}`;
    default: {
      // Every kind has its line: a new one fails to compile here rather than print nothing.
      const unknown: never = row;
      return unknown;
    }
  }
}

/**
 * The last line of `albedo chat --json` for a turn: how it ended and the tokens it used, summed
 * over its model calls as the endpoint reported them (O-10); `usage` is null when none reported any.
 */
function turnEndLine(end: TurnEnd): { readonly kind: "end"; readonly result: TurnEnd["result"]; readonly usage: UsageTotals | null } {
  return { kind: "end", result: end.result, usage: end.usage ?? null };
}

function indent(text: string): string {
  return text.split("\n").map((line) => `  ${line}`).join("\n");
}

function modeOf(args: ParsedArgs): ModelMode | undefined {
  const given = stringOption(args, "mode");
  if (given === undefined) return undefined;
  if (!(MODEL_MODES as readonly string[]).includes(given)) throw new UsageError(`--mode must be one of ${MODEL_MODES.join(", ")}, got "${given}"`);
  return given as ModelMode;
}

/** Runs one line and prints what it drew; returns the exit status. */
async function oneShot(backend: TerminalSession, message: string, json: boolean, io: CliIO): Promise<number> {
  const print = (text: string) => io.stdout.write(`${visibleControls(text, "\n\t")}\n`);
  const result = await backend.submit(message, {
    onRow: (row) => {
      if (json) io.stdout.write(`${jsonWithoutControls(JSON.stringify(row))}\n`);
      else {
        const text = renderRow(row, false, stateDir(io.env));
        if (text !== undefined) print(text);
      }
    },
    onText: () => undefined,
  });
  if (result.kind === "builtin") {
    if (json) io.stdout.write(`${jsonWithoutControls(JSON.stringify(result.value))}\n`);
    else io.stdout.write(visibleControls(result.text, "\n\t"));
    return 0;
  }
  if (json) io.stdout.write(`${JSON.stringify(turnEndLine(result.end))}\n`);
  else if (result.end.usage !== undefined) print(usageLine(result.end.usage));
  return result.end.result === "completed" ? 0 : EXIT_TURN_NOT_COMPLETED;
}

/** How `albedo chat` exits when the daemon holding its session went away under it. */
const EXIT_SESSION_LOST = 1;

/** The interactive chat: one line at a time, prose streamed, Ctrl-C to interrupt, twice to leave. */
class InteractiveChat {
  private readonly rl: Interface;
  /** The turn under way, settled when it ends. */
  private busy: Promise<unknown> | undefined;
  private armedExit = false;
  private midLine = false;
  /** The elapsed-time line under a python call that is running: the cell's output comes as one row at its end. */
  private ticker: ProgressDone | undefined;
  /** The tokens this chat's turns used, as the endpoint reported them; printed when the chat ends. */
  private usage: UsageTotals | undefined;

  constructor(private readonly backend: TerminalSession, private readonly io: CliIO) {
    this.rl = createInterface({
      input: io.stdin,
      output: io.stdout,
      terminal: Boolean(io.stdin.isTTY && io.stdout.isTTY),
      completer: (line: string): [string[], string] =>
        line.startsWith("/") && !line.includes(" ") ? [completeCommand({ commands: backend.commandNames().map((name) => ({ name })) }, line), line] : [[], line],
    });
    if (io.stdin.isTTY && io.stdout.isTTY) completeTabOnlyReads(this.rl, io.stdin);
  }

  /** Reads and runs lines until the person leaves (true), or until the daemon holding the session went away (false). */
  async run(): Promise<boolean> {
    this.io.stdout.write(`albedo chat (${this.backend.where}) · /model shows the model, /help the commands · Ctrl-C interrupts, twice to quit\n`);
    const exit = new Promise<boolean>((resolve) => this.rl.on("SIGINT", () => (this.onInterrupt() ? resolve(true) : undefined)));
    // Every later line would fail the same way: say what happened once and end.
    const lost = this.backend.lost?.then((line) => {
      this.stopTicker();
      this.endLine();
      this.io.stderr.write(`${this.io.stdout.isTTY ? "\n" : ""}${line}\n`);
      return false;
    });
    this.prompt();
    const lines = (async () => {
      for await (const line of this.rl) {
        // Any line entered, even an empty one, means the person stayed: the next Ctrl-C drops a line again before one quits.
        this.armedExit = false;
        if (line.trim() !== "") await this.submit(line);
        this.prompt();
      }
      return true;
    })();
    const stayed = await Promise.race([lines, exit, ...(lost ? [lost] : [])]);
    this.rl.close();
    if (this.usage !== undefined) this.io.stdout.write(`${usageLine(this.usage)}\n`);
    return stayed;
  }

  /** Returns true when the chat should end. */
  private onInterrupt(): boolean {
    this.stopTicker();
    if (this.armedExit) return true;
    this.armedExit = true;
    if (this.busy !== undefined) {
      this.io.stdout.write("\n[interrupting… press Ctrl-C again to quit]\n");
      interruptRunning({ interrupt: () => this.backend.interrupt(), ended: this.busy, io: this.io, who: "albedo chat", what: "turn", next: "press Ctrl-C again to quit" });
    } else {
      // The typed line is dropped, as at the console's prompt: Enter after Ctrl-C sends nothing.
      discardLine(this.rl);
      this.io.stdout.write("\n(press Ctrl-C again to quit)\n");
      this.prompt();
    }
    return false;
  }

  private prompt(): void {
    if (this.io.stdin.isTTY) {
      this.rl.setPrompt("› ");
      // Keep the cursor where it is: text typed while a turn ran stays editable at its end.
      this.rl.prompt(true);
    }
  }

  private async submit(line: string): Promise<void> {
    this.armedExit = false;
    try {
      const turn = this.backend.submit(line, { onRow: (row) => this.showRow(row), onText: (delta) => this.stream(delta), columns: textColumns(this.io.stdout.columns) });
      this.busy = turn;
      const result = await turn;
      this.endLine();
      if (result.kind === "turn" && result.end.usage !== undefined) this.usage = this.usage === undefined ? result.end.usage : sumUsage(this.usage, result.end.usage);
      this.showResult(result);
    } catch (error) {
      this.endLine();
      this.io.stderr.write(`${visibleControls(error instanceof Error ? error.message : String(error), "\n\t")}\n`);
    } finally {
      this.stopTicker();
      this.busy = undefined;
    }
  }

  private stopTicker(): void {
    this.ticker?.();
    this.ticker = undefined;
  }

  private stream(delta: string): void {
    this.stopTicker();
    this.io.stdout.write(visibleControls(delta, "\n\t"));
    this.midLine = !delta.endsWith("\n");
  }

  private endLine(): void {
    if (this.midLine) this.io.stdout.write("\n");
    this.midLine = false;
  }

  private showRow(row: StoredRow): void {
    const text = renderRow(row, true, stateDir(this.io.env));
    // A row the running cell draws (an MCP call, a skill it read) goes above its ticker, which keeps counting.
    if (this.ticker !== undefined && text !== undefined && row.kind !== "output" && row.kind !== "error") {
      this.ticker.note(visibleControls(text, "\n\t"));
      return;
    }
    this.stopTicker();
    if (text === undefined) {
      // The prose streamed already; the row closes its line.
      if (row.kind === "assistant") this.endLine();
      return;
    }
    this.endLine();
    this.io.stdout.write(`${visibleControls(text, "\n\t")}\n`);
    if (row.kind === "code") this.ticker = startProgress(this.io.stdout, PYTHON_RUNNING);
  }

  private showResult(result: ChatResult): void {
    if (result.kind === "builtin") this.io.stdout.write(visibleControls(result.text, "\n\t"));
    else if (result.end.result === "failed") this.io.stdout.write("[the turn failed; your message is kept, send another to go on]\n");
  }
}

async function chat(args: ParsedArgs, io: CliIO): Promise<number> {
  const mode = modeOf(args);
  const message = args.positionals.join(" ").trim();
  const backend = await openTerminalSession(args, io, "chat", mode);
  try {
    if (message !== "") return await oneShot(backend, message, args.options.has("json"), io);
    return (await new InteractiveChat(backend, io).run()) ? 0 : EXIT_SESSION_LOST;
  } finally {
    await backend.close();
  }
}

/** `albedo chat`: the model loop from the command line. */
export const chatCommand: CliCommand = {
  options: [
    WORKSPACE_OPTION,
    JSON_OPTION,
    { name: "mode", value: "MODE", help: "how the model reaches skills for this run: code (Python) or tool (the skill tool)" },
    SANDBOX_OPTION,
  ],
  run: chat,
};
