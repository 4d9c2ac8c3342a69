/**
 * The jupyter_client baseline as a process the bench drives one command at a time
 * (bench/python/jupyter_client_baseline.py), so its batches can alternate with albedo's and both
 * see the same machine load. Its stderr (kernel warnings) goes to the bench's stderr.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { installDir } from "../src/platform/index.js";

/** Longest one baseline command may take (16 kernels booting at once on two cores included). */
export const BASELINE_COMMAND_TIMEOUT_MS = 300_000;

export class JupyterClientBaseline {
  private readonly lines: AsyncIterator<string>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stderr.pipe(process.stderr);
    this.lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  }

  /** Starts the driver with `python` (which must have jupyter_client and ipykernel). */
  static start(python: string): JupyterClientBaseline {
    const script = join(installDir(), "bench", "python", "jupyter_client_baseline.py");
    return new JupyterClientBaseline(spawn(python, [script], { stdio: ["pipe", "pipe", "pipe"] }));
  }

  /** Sends one command and returns its JSON answer; throws when the driver exits or takes too long. */
  async ask<T>(command: string): Promise<T> {
    this.child.stdin.write(`${command}\n`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`bench: jupyter_client baseline gave no answer to "${command}" within ${BASELINE_COMMAND_TIMEOUT_MS} ms`)), BASELINE_COMMAND_TIMEOUT_MS);
    });
    try {
      const next = await Promise.race([this.lines.next(), late]);
      if (next.done) throw new Error(`bench: the jupyter_client baseline exited during "${command}"`);
      return JSON.parse(next.value) as T;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Shuts its kernels down and waits for the driver to exit. */
  async quit(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin.end("quit\n");
    await exited;
  }
}
