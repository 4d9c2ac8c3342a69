import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { CliFailure, stringOption, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { failureText, NETWORK_OPTION, REMOTE_OPTION, RESUME_OPTION, SANDBOX_OPTION, WORKSPACE_OPTION, type CliCommand, type CliIO } from "../plumbing/command.js";
import { openEmbeddedSession } from "../plumbing/session.js";
import { interruptRunning } from "../terminal/interrupt.js";
import { pageTexts, renderOutput, renderPages } from "../terminal/render.js";
import { inlineProtocol, OutputPrinter } from "../terminal/imageOutput.js";
import { ImageStore } from "../../images/index.js";
import { RECEIPT_TTL_MS } from "../../operations/index.js";
import { stateDir } from "../../platform/index.js";
import { visibleControls } from "../../text/index.js";
import type { Session } from "../../session/index.js";
import { DenialLines } from "../../network/index.js";
import type { ExecuteOutput, ExecuteReply } from "../../kernel/index.js";

/** Exit code after Ctrl-C ended the run (128 + SIGINT). */
export const EXIT_INTERRUPTED = 130;

/** Exit status when the FILE to run cannot be read (as `python FILE` exits). */
export const EXIT_CANNOT_READ = 2;

/** What the C library calls the errors a user meets when naming a file, as `python` and `cat` print them. */
const SYSTEM_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: "No such file or directory",
  EACCES: "Permission denied",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  ELOOP: "Too many levels of symbolic links",
  ENAMETOOLONG: "File name too long",
};

/** The error as a person reads it: the system's words for a known errno, else Node's message. */
export function systemErrorText(error: NodeJS.ErrnoException): string {
  return (error.code !== undefined ? SYSTEM_ERRORS[error.code] : undefined) ?? error.message;
}

/** The warning IPython prints after a SystemExit; a script run by `exec` exits for real, so it does not apply. */
const IPYTHON_EXIT_HINT = /^.*UserWarning: To exit: use 'exit', 'quit', or Ctrl-D\.\n(?:\s+warn\(.*\)\n)?/m;

/**
 * The exit status a script asked for with sys.exit(), as Python computes it: none or no argument
 * is 0, an integer is its low byte, anything else is printed and gives 1. Undefined when the
 * reply is no SystemExit.
 */
export function systemExitStatus(reply: ExecuteReply): { status: number; message?: string } | undefined {
  if (reply.status !== "error" || (reply as { ename?: string }).ename !== "SystemExit") return undefined;
  const value = String((reply as { evalue?: string }).evalue ?? "");
  if (value === "" || value === "None") return { status: 0 };
  if (/^-?\d+$/.test(value)) return { status: Number(BigInt.asUintN(8, BigInt(value))) };
  return { status: 1, message: value };
}

/** Outputs of an exec run: a SystemExit's traceback and IPython's exit hint are not the script's. */
function execOutput(output: ExecuteOutput, io: CliIO): void {
  const type = output.header.msg_type;
  if (type === "error" && (output.content as { ename?: string }).ename === "SystemExit") return;
  if (type === "stream" && (output.content as { name?: string }).name === "stderr") {
    const content = output.content as { name: string; text: string };
    const text = content.text.replace(IPYTHON_EXIT_HINT, "");
    if (text !== "") renderOutput({ ...output, content: { ...content, text } } as ExecuteOutput, io);
    return;
  }
  renderOutput(output, io);
}

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
    throw new CliFailure(`cannot read ${file}: ${systemErrorText(error)}`, EXIT_CANNOT_READ);
  });
  if (text.length > MAX_EXEC_SOURCE_BYTES) throw new UsageError(`${file} is over MAX_EXEC_SOURCE_BYTES = ${MAX_EXEC_SOURCE_BYTES}`);
  return { code: text.toString("utf8"), fromStdin: false };
}

/** `albedo exec`: run code in a fresh session's kernel with `skills` and `commands` in scope. */
export const execCommand: CliCommand = {
  options: [WORKSPACE_OPTION, SANDBOX_OPTION, REMOTE_OPTION, RESUME_OPTION, NETWORK_OPTION, { name: "code", short: "c", value: "CODE", help: "the Python code to run" }],
  async run(args, io) {
    const { code, fromStdin } = await sourceOf(args, io);
    // The handler is in place before the kernel boots, so Ctrl-C during boot still closes the session cleanly.
    let session: Session | undefined;
    let cell: Promise<unknown> | undefined;
    let interrupts = 0;
    let denials: DenialLines | undefined;
    const onSigint = () => {
      interrupts += 1;
      if (session === undefined || cell === undefined) return;
      const running = session;
      if (interrupts === 1) {
        interruptRunning({ interrupt: () => running.kernel.interrupt(), ended: cell, io, who: "albedo exec", next: "press Ctrl-C again to stop the kernel and exit" });
      } else if (interrupts === 2) {
        io.stderr.write("albedo exec: stopping the kernel\n");
        void running.close().finally(() => process.exit(EXIT_INTERRUPTED));
      }
    };
    process.on("SIGINT", onSigint);
    try {
      session = await openEmbeddedSession(args, io);
      if (interrupts > 0) return EXIT_INTERRUPTED;
      const resumed = session.restores.last;
      if (resumed !== undefined) io.stderr.write(`albedo exec: resumed: ${visibleControls(resumed.summary)}\n`);
      const readline = !fromStdin && io.stdin.isTTY ? createInterface({ input: io.stdin, output: io.stderr }) : undefined;
      // A connection the kernel's proxy refuses is said on stderr as it happens; the repeats' counts when the cell ends (N-4).
      const egress = session.network.egress;
      denials = egress && new DenialLines(egress, (notice) => io.stderr.write(`${visibleControls(notice.text)}\n`));
      const future = session.kernel.execute(code, readline ? { onInput: (prompt) => readline.question(prompt) } : {});
      const printer = new OutputPrinter(io, new ImageStore(stateDir(io.env), { retentionMs: RECEIPT_TTL_MS }), (output) => execOutput(output, io), inlineProtocol(io.stdout, io.env));
      future.onOutput((output) => printer.push(output));
      cell = future.done;
      const reply = await future.done.finally(() => {
        readline?.close();
        denials?.flush();
      });
      await printer.flush();
      renderPages(pageTexts(reply), io);
      const exit = systemExitStatus(reply);
      if (exit?.message !== undefined) io.stderr.write(`${visibleControls(exit.message)}\n`);
      return exit?.status ?? (reply.status === "ok" ? 0 : 1);
    } catch (error) {
      if (error instanceof UsageError || error instanceof CliFailure) throw error;
      io.stderr.write(`albedo exec: ${failureText(error)}`);
      return 1;
    } finally {
      process.off("SIGINT", onSigint);
      denials?.dispose();
      await session?.close();
    }
  },
};
