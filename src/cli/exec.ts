import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { stringOption, UsageError, type ParsedArgs } from "./args.js";
import { REMOTE_OPTION, SANDBOX_OPTION, WORKSPACE_OPTION, type CliCommand, type CliIO } from "./command.js";
import { openEmbeddedSession } from "./session.js";
import { renderOutput } from "./render.js";
import { visibleControls } from "../text/index.js";
import type { Session } from "../session/index.js";

/** Exit code after Ctrl-C ended the run (128 + SIGINT). */
export const EXIT_INTERRUPTED = 130;

/** Largest program `albedo exec` accepts from a file or stdin. */
export const MAX_EXEC_SOURCE_BYTES = 16 * 1024 * 1024;

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_EXEC_SOURCE_BYTES) throw new UsageError(`the program on stdin is over MAX_EXEC_SOURCE_BYTES = ${MAX_EXEC_SOURCE_BYTES}`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function sourceOf(args: ParsedArgs, io: CliIO): Promise<{ code: string; fromStdin: boolean }> {
  const inline = stringOption(args, "code");
  const [file, ...extra] = args.positionals;
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);
  if (inline !== undefined && file !== undefined) throw new UsageError("give either -c CODE or FILE, not both");
  if (inline !== undefined) return { code: inline, fromStdin: false };
  if (file === undefined) throw new UsageError("nothing to run: give FILE, - (stdin) or -c CODE");
  if (file === "-") return { code: await readAll(io.stdin), fromStdin: true };
  const path = resolve(io.cwd, file);
  const text = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${file}: ${error.code ?? error.message}`);
  });
  if (text.length > MAX_EXEC_SOURCE_BYTES) throw new UsageError(`${file} is over MAX_EXEC_SOURCE_BYTES = ${MAX_EXEC_SOURCE_BYTES}`);
  return { code: text.toString("utf8"), fromStdin: false };
}

/** `albedo exec`: run code in a fresh session's kernel with `skills` and `commands` in scope. */
export const execCommand: CliCommand = {
  path: ["exec"],
  summary: "run Python in a session kernel with skills and commands in scope; exit 1 on a Python error",
  usage: "(FILE | - | -c CODE)",
  options: [WORKSPACE_OPTION, SANDBOX_OPTION, REMOTE_OPTION, { name: "code", short: "c", value: "CODE", help: "the Python code to run" }],
  async run(args, io) {
    const { code, fromStdin } = await sourceOf(args, io);
    // The handler is in place before the kernel boots, so Ctrl-C during boot still closes the session cleanly.
    let session: Session | undefined;
    let interrupts = 0;
    const onSigint = () => {
      interrupts += 1;
      if (session === undefined) return;
      if (interrupts === 1) void session.interrupt().catch(() => undefined);
      else void session.close().finally(() => process.exit(EXIT_INTERRUPTED));
    };
    process.on("SIGINT", onSigint);
    try {
      session = await openEmbeddedSession(args, io);
      if (interrupts > 0) return EXIT_INTERRUPTED;
      const readline = !fromStdin && io.stdin.isTTY ? createInterface({ input: io.stdin, output: io.stderr }) : undefined;
      const future = session.execute(code, readline ? { onInput: (prompt) => readline.question(prompt) } : {});
      future.onOutput((output) => renderOutput(output, io));
      const reply = await future.done.finally(() => readline?.close());
      return reply.status === "ok" ? 0 : 1;
    } catch (error) {
      if (error instanceof UsageError) throw error;
      io.stderr.write(`albedo exec: ${visibleControls(error instanceof Error ? error.message : String(error))}\n`);
      return 1;
    } finally {
      process.off("SIGINT", onSigint);
      await session?.close();
    }
  },
};
