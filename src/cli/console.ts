import { createInterface, type Interface } from "node:readline";
import { completeCommand, parseSlashLine } from "../commands/index.js";
import { REMOTE_OPTION, SANDBOX_OPTION, type CliCommand, type CliIO, WORKSPACE_OPTION } from "./command.js";
import { openConsoleSession, type ConsoleSession } from "./session.js";
import { renderOutput } from "./render.js";
import { visibleControls } from "../text/index.js";

/** Lines that open a block: the console keeps reading until a blank line closes it. */
const OPENS_BLOCK = /[:\\([{,]\s*$/;

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

class Console {
  private buffer: string[] = [];
  private running = false;
  private readonly rl: Interface;

  constructor(private readonly session: ConsoleSession, private readonly io: CliIO) {
    this.rl = createInterface({
      input: io.stdin,
      output: io.stdout,
      terminal: Boolean(io.stdin.isTTY && io.stdout.isTTY),
      completer: (line: string, callback: (error: null, result: [string[], string]) => void) => {
        void this.complete(line).then((result) => callback(null, result));
      },
    });
  }

  /** Completions as readline shows them in its menu: control characters visible. */
  private async complete(line: string): Promise<[string[], string]> {
    const [matches, completed] = await this.matches(line);
    return [matches.map((match) => visibleControls(match)), completed];
  }

  private async matches(line: string): Promise<[string[], string]> {
    if (this.buffer.length === 0 && line.startsWith("/") && !line.includes(" ")) {
      return [completeCommand({ commands: this.session.commandNames().map((name) => ({ name })) }, line), line];
    }
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

  async run(): Promise<void> {
    this.show(this.io.stdout, `albedo console · session ${this.session.id} (${this.session.where}) · ${this.session.skillCount()} skills · /help for commands, Ctrl-D to quit\n`);
    this.rl.on("SIGINT", () => this.onInterrupt());
    this.prompt();
    for await (const line of this.rl) {
      await this.onLine(line);
      this.prompt();
    }
    if (this.buffer.length > 0) await this.runCell(this.buffer.splice(0).join("\n"));
  }

  private prompt(): void {
    if (!this.io.stdin.isTTY) return;
    this.rl.setPrompt(this.buffer.length === 0 ? ">>> " : "... ");
    this.rl.prompt();
  }

  private onInterrupt(): void {
    if (this.running) {
      void this.session.interrupt().catch(() => undefined);
      return;
    }
    this.buffer = [];
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
    this.running = true;
    try {
      const onInput = (prompt: string) => new Promise<string>((resolve) => this.rl.question(prompt, resolve));
      await this.session.execute(code, (output) => renderOutput(output, this.io), onInput);
    } catch (error) {
      this.show(this.io.stderr, `${error instanceof Error ? error.message : String(error)}\n`);
    } finally {
      this.running = false;
    }
  }

  private async runSlash(name: string, text: string): Promise<void> {
    try {
      this.show(this.io.stdout, await this.session.runSlash(name, text));
    } catch (error) {
      this.show(this.io.stderr, `${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }

  close(): void {
    this.rl.close();
  }
}

/** `albedo console`: an interactive console on a session (Python cells and slash commands). */
export const consoleCommand: CliCommand = {
  path: ["console"],
  summary: "interactive console on a session: Python cells, slash commands with completion, /reload session",
  usage: "",
  options: [WORKSPACE_OPTION, SANDBOX_OPTION, REMOTE_OPTION],
  async run(args, io) {
    const session = await openConsoleSession(args, io);
    const console = new Console(session, io);
    try {
      await console.run();
      return 0;
    } finally {
      console.close();
      await session.close();
    }
  },
};
