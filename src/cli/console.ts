import { createInterface, type Interface } from "node:readline";
import { completeCommand, findCommand, parseSlashLine } from "../commands/index.js";
import type { Session } from "../session/index.js";
import { SANDBOX_OPTION, type CliCommand, type CliIO, WORKSPACE_OPTION } from "./command.js";
import { openEmbeddedSession } from "./session.js";
import { renderOutput, renderValue } from "./render.js";

/** Lines that open a block: the console keeps reading until a blank line closes it. */
const OPENS_BLOCK = /[:\\([{,]\s*$/;
/** How long a Python completion may take before the console gives up on it. */
export const COMPLETION_TIMEOUT_MS = 1_000;

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

  constructor(private readonly session: Session, private readonly io: CliIO) {
    this.rl = createInterface({
      input: io.stdin,
      output: io.stdout,
      terminal: Boolean(io.stdin.isTTY && io.stdout.isTTY),
      completer: (line: string, callback: (error: null, result: [string[], string]) => void) => {
        void this.complete(line).then((result) => callback(null, result));
      },
    });
  }

  private async complete(line: string): Promise<[string[], string]> {
    if (this.buffer.length === 0 && line.startsWith("/") && !line.includes(" ")) {
      return [completeCommand(this.session.view.commands, line), line];
    }
    try {
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), COMPLETION_TIMEOUT_MS).unref());
      const reply = await Promise.race([this.session.kernel.complete(line, line.length), timeout]);
      if (reply.status !== "ok") return [[], line];
      const head = line.slice(0, reply.cursor_start);
      return [reply.matches.map((match) => head + match), line];
    } catch {
      return [[], line];
    }
  }

  async run(): Promise<void> {
    this.io.stdout.write(`albedo console · session ${this.session.id} · ${this.session.view.snapshot.skills.length} skills · /help for commands, Ctrl-D to quit\n`);
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
    if (this.buffer.length === 0 && parseSlashLine(line) !== undefined) {
      await this.runSlash(line);
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
      const future = this.session.execute(code, { onInput: (prompt) => new Promise((resolve) => this.rl.question(prompt, resolve)) });
      future.onOutput((output) => renderOutput(output, this.io));
      await future.done;
    } catch (error) {
      this.io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    } finally {
      this.running = false;
    }
  }

  private async runSlash(line: string): Promise<void> {
    const { name, text } = parseSlashLine(line)!;
    try {
      const result = await this.session.invoke(name, text, "user");
      const command = findCommand(this.session.view.commands, name);
      if (command?.skill !== undefined) {
        const activation = result as { name: string; source: string; instructions: string };
        this.io.stdout.write(`activated skill ${activation.name} · ${Buffer.byteLength(activation.instructions)} bytes from ${activation.source}\n`);
        this.io.stdout.write("(no model adapter is configured, so no turn was submitted; the instructions are available to Python via commands)\n");
        return;
      }
      this.io.stdout.write(renderValue(result));
    } catch (error) {
      this.io.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
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
  options: [WORKSPACE_OPTION, SANDBOX_OPTION],
  async run(args, io) {
    const session = await openEmbeddedSession(args, io);
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
