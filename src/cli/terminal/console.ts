import { createInterface, type Interface } from "node:readline";
import { parseSlashLine } from "../../commands/index.js";
import { textColumns, visibleControls } from "../../text/index.js";
import { NETWORK_OPTION, REMOTE_OPTION, RESUME_OPTION, SANDBOX_OPTION, type CliCommand, type CliIO, WORKSPACE_OPTION } from "../plumbing/command.js";
import { openTerminalSession, type TerminalSession } from "./terminalSession.js";
import { interruptRunning } from "./interrupt.js";
import { completeTabOnlyReads, discardLine, serialCompleter, type Completion } from "./lineEditor.js";
import { loadHistory, MAX_HISTORY_LINES, saveHistory } from "./history.js";
import { renderOutput, renderPages, restoredLine } from "./render.js";
import { inlineProtocol, OutputPrinter } from "./imageOutput.js";
import { ImageStore } from "../../images/index.js";
import { RECEIPT_TTL_MS } from "../../operations/index.js";
import { styleFor } from "./style.js";
import { stateDir } from "../../platform/index.js";

/** Lines that open a block: the console keeps reading until a blank line closes it. */
const OPENS_BLOCK = /[:\\([{,]\s*$/;
/** Exit status of a console whose session ended under it (its daemon stopped). */
const EXIT_SESSION_LOST = 1;
/** A close that takes longer than this says so, so a slow kernel shutdown does not look like a hang. */
export const CLOSE_NOTICE_MS = 1_000;

function bracketDepth(text: string): number {
  let depth = 0;
  for (const char of text.replace(/(["'])(?:\\.|(?!\1).)*\1/g, "")) {
    if ("([{".includes(char)) depth += 1;
    else if (")]}".includes(char)) depth -= 1;
  }
  return depth;
}

/** Whether the buffered lines form a block that needs more input before it runs. */
export function needsMore(lines: readonly string[]): boolean {
  const text = lines.join("\n");
  if (bracketDepth(text) > 0 || (text.match(/"""|'''/g)?.length ?? 0) % 2 === 1) return true;
  const last = lines.at(-1) ?? "";
  if (lines.length === 1) return OPENS_BLOCK.test(last);
  return last.trim().length > 0;
}

/** The first lines the console prints: where it runs, how many skills (and how many are broken), how to get help and leave, what the kernel may reach. */
export function banner(session: TerminalSession): string {
  const { skills, withErrors } = session.summary;
  const broken = withErrors > 0 ? `, ${withErrors} with errors (see /skills)` : "";
  return `albedo console · session ${session.id} (${session.where})\n${skills} skill${skills === 1 ? "" : "s"}${broken} · /help lists commands · Ctrl-D quits\nnetwork: ${session.network}\n`;
}

class Console {
  private buffer: string[] = [];
  /** The cell under way, settled when it ends. */
  private running: Promise<unknown> | undefined;
  /** Set once readline closed (Ctrl-D, end of input): a prompt after that would resume stdin and keep the process alive. */
  private ended = false;
  /** Set when the session ended under the console (its daemon stopped): the line said, once. */
  private lostLine: string | undefined;
  private readonly rl: Interface;
  private readonly terminal: boolean;
  /** The images this console showed, kept in the state dir under one quota (I-3). */
  private readonly images: ImageStore;

  constructor(private readonly session: TerminalSession, private readonly io: CliIO, history: string[]) {
    this.images = new ImageStore(stateDir(io.env), { retentionMs: RECEIPT_TTL_MS });
    this.terminal = Boolean(io.stdin.isTTY && io.stdout.isTTY);
    this.rl = createInterface({
      input: io.stdin,
      output: io.stdout,
      terminal: this.terminal,
      history,
      historySize: MAX_HISTORY_LINES,
      completer: serialCompleter(() => this.rl, (line) => this.complete(line)),
    });
    if (this.terminal) completeTabOnlyReads(this.rl, io.stdin);
  }

  /** The lines typed this run and before, most recent first (readline's order). */
  get history(): readonly string[] {
    return (this.rl as unknown as { history?: string[] }).history ?? [];
  }

  /** Completions as readline shows them in its menu: control characters visible, but a Tab the line already holds kept. */
  private async complete(line: string): Promise<Completion> {
    const [matches, completed] = await this.matches(line);
    return [matches.map((match) => visibleControls(match, "\t")), completed];
  }

  private async matches(line: string): Promise<[string[], string]> {
    if (this.buffer.length === 0 && line.startsWith("/")) return [[...this.session.completeSlash(line)], line];
    try {
      return await this.session.completeCode(line);
    } catch {
      return [[], line];
    }
  }

  /** Writes text the session produced (command results, activation lines, errors) with control characters visible. */
  private show(stream: NodeJS.WritableStream, text: string): void {
    stream.write(visibleControls(text, "\n\t"));
  }

  /** Reads and runs lines until Ctrl-D or the end of input (true), or until the session is lost under it (false). */
  async run(): Promise<boolean> {
    this.show(this.io.stdout, banner(this.session));
    this.rl.on("SIGINT", () => this.onInterrupt());
    this.rl.on("close", () => (this.ended = true));
    void this.session.lost?.then((line) => this.onLost(line));
    const restores = this.session.onRestore((line) => this.onRestored(line));
    const denials = this.session.onNetworkDenial((line) => this.onDenial(line));
    this.prompt();
    try {
      for await (const line of this.rl) {
        if (this.lostLine !== undefined) break;
        await this.onLine(line);
        this.prompt();
      }
    } finally {
      restores.dispose();
      denials.dispose();
    }
    if (this.lostLine !== undefined) return false;
    // Ctrl-D leaves the cursor after the prompt; the shell's prompt belongs on a line of its own.
    if (this.terminal) this.io.stdout.write("\n");
    if (this.buffer.length > 0) await this.runCell(this.buffer.splice(0).join("\n"));
    return true;
  }

  /** Every later input would fail the same way, so the console says what happened once and ends. */
  private onLost(line: string): void {
    this.lostLine = line;
    this.io.stderr.write(`${this.terminal ? "\n" : ""}${line}\n`);
    this.rl.close();
  }

  /** The kernel came back from its checkpoint under the console: said on its own line, then the prompt again when none ran a cell. */
  private onRestored(line: string): void {
    this.io.stderr.write(`${this.terminal ? "\n" : ""}${restoredLine(line)}\n`);
    if (this.running === undefined) this.prompt();
  }

  /** A connection the kernel's proxy refused, said as it happens on its own line; the prompt again when no cell runs (a background thread's). */
  private onDenial(line: string): void {
    this.io.stderr.write(`${this.terminal && this.running === undefined ? "\n" : ""}${visibleControls(line)}\n`);
    if (this.running === undefined) this.prompt();
  }

  private prompt(): void {
    if (!this.io.stdin.isTTY || this.ended) return;
    this.rl.setPrompt(this.buffer.length === 0 ? ">>> " : "... ");
    // Keep the cursor where it is: text typed while a cell ran stays editable at its end.
    this.rl.prompt(true);
  }

  private onInterrupt(): void {
    if (this.running !== undefined) {
      const next = "press Ctrl-C to interrupt it again";
      interruptRunning({ interrupt: () => this.session.interrupt(), ended: this.running, io: this.io, who: "albedo console", next });
      return;
    }
    this.buffer = [];
    discardLine(this.rl);
    this.io.stdout.write("^C\n");
    this.prompt();
  }

  private async onLine(line: string): Promise<void> {
    const slash = this.buffer.length === 0 ? parseSlashLine(line) : undefined;
    if (slash !== undefined) {
      await this.runSlash(slash.name, slash.text);
      return;
    }
    if (this.buffer.length === 0 && line.trim().length === 0) return;
    this.buffer.push(line);
    if (needsMore(this.buffer)) return;
    await this.runCell(this.buffer.splice(0).join("\n"));
  }

  private async runCell(code: string): Promise<void> {
    try {
      const onInput = (prompt: string) => new Promise<string>((resolve) => this.rl.question(prompt, resolve));
      const printer = new OutputPrinter(this.io, this.images, (output) => renderOutput(output, this.io), inlineProtocol(this.io.stdout, this.io.env));
      const cell = this.session.execute(code, (output) => printer.push(output), onInput);
      this.running = cell;
      const result = await cell;
      await printer.flush();
      renderPages(result.pages, this.io);
    } catch (error) {
      if (this.lostLine === undefined) this.show(this.io.stderr, `${error instanceof Error ? error.message : String(error)}\n`);
    } finally {
      this.running = undefined;
    }
  }

  private async runSlash(name: string, text: string): Promise<void> {
    try {
      this.show(this.io.stdout, await this.session.runSlash(name, text, textColumns(this.io.stdout.columns)));
    } catch (error) {
      if (this.lostLine !== undefined) return;
      const style = styleFor(this.io.stderr, this.io.env);
      this.io.stderr.write(`${style.red(`${visibleControls(name)}:`)} ${visibleControls(error instanceof Error ? error.message : String(error), "\n\t")}\n`);
    }
  }

  close(): void {
    this.rl.close();
  }
}

/** Closes the session; past CLOSE_NOTICE_MS a terminal is told, since a kernel's shutdown ladder can take seconds. */
async function closeSession(session: TerminalSession, io: CliIO): Promise<void> {
  const notice = setTimeout(() => {
    if (io.stderr.isTTY) io.stderr.write("closing session…\n");
  }, CLOSE_NOTICE_MS);
  try {
    await session.close();
  } finally {
    clearTimeout(notice);
  }
}

/** `albedo console`: an interactive console on a session (Python cells and slash commands). */
export const consoleCommand: CliCommand = {
  options: [WORKSPACE_OPTION, SANDBOX_OPTION, REMOTE_OPTION, RESUME_OPTION, NETWORK_OPTION],
  async run(args, io) {
    const state = stateDir(io.env);
    const session = await openTerminalSession(args, io, "console");
    const restored = session.restoreLine();
    if (restored !== undefined) io.stderr.write(`albedo: resumed: ${visibleControls(restored)}\n`);
    const console = new Console(session, io, await loadHistory(state));
    try {
      return (await console.run()) ? 0 : EXIT_SESSION_LOST;
    } finally {
      console.close();
      if (io.stdin.isTTY) await saveHistory(state, console.history).catch(() => undefined);
      await closeSession(session, io);
    }
  },
};
