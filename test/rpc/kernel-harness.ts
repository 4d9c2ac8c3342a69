import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { KERNEL_DIR, PYTHON, makeRunDir } from "./helpers.js";

/**
 * Longest the harness may take to answer one command (kernel boot included): above the harness's
 * own 30 s cell bound and below vitest's 60 s test timeout, so a stuck kernel fails with its stderr.
 */
export const HARNESS_ANSWER_LIMIT_MS = 45_000;
/** How much of the harness's (and its kernel's) stderr a failure reports. */
const STDERR_TAIL_CHARS = 16_000;
/** Grace given to the harness to shut its kernel down before it is killed. */
export const HARNESS_QUIT_GRACE_MS = 10_000;

const SCRIPT = path.resolve("test/rpc/kernel_harness.py");

export interface CellResult {
  readonly msg_id: string;
  readonly status: "ok" | "error";
  readonly ename: string | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface KernelThread {
  readonly tid: number;
  readonly name: string;
  readonly state: string;
  readonly sigint_pending: boolean;
  readonly sigint_blocked: boolean;
}

/** A real ipykernel driven through jupyter_client by test/rpc/kernel_harness.py. */
export class KernelHarness {
  private readonly answers: string[] = [];
  private waiting: ((line: string) => void) | undefined;
  private stderr = "";
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly removeDir: () => void,
  ) {
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = undefined;
        resolve(line);
      } else this.answers.push(line);
    });
    child.stderr.on("data", (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS)));
    this.exited = new Promise((resolve) => child.on("close", () => resolve()));
  }

  /** Starts a kernel (`withExtension`: `--ext albedo`) with `env` added; resolves once it is ready. */
  static async start(env: Record<string, string | undefined>, withExtension: boolean): Promise<KernelHarness> {
    const dirs = makeRunDir();
    const child = spawn(PYTHON, [SCRIPT, withExtension ? "ext" : "plain"], {
      env: {
        ...process.env,
        ...env,
        PYTHONPATH: KERNEL_DIR,
        IPYTHONDIR: path.join(dirs.dir, "ipython"),
        JUPYTER_RUNTIME_DIR: path.join(dirs.dir, "runtime"),
      },
    });
    const harness = new KernelHarness(child, dirs.remove);
    await harness.next();
    return harness;
  }

  /** Runs a cell to completion. */
  run(code: string): Promise<CellResult> {
    return this.ask({ op: "run", code });
  }

  /** Starts a cell and resolves with its msg_id once its stdout shows `marker`. */
  start(code: string, marker: string): Promise<{ msg_id: string; error?: string }> {
    return this.ask({ op: "start", code, marker });
  }

  /** Sends the kernel an interrupt (SIGINT for the python3 kernelspec). */
  interrupt(): Promise<unknown> {
    return this.ask({ op: "interrupt" });
  }

  /** Waits up to `timeoutS` seconds for the cell's execute_reply. */
  wait(msgId: string, timeoutS: number): Promise<{ finished: boolean; status?: string; ename?: string }> {
    return this.ask({ op: "wait", msg_id: msgId, timeout: timeoutS });
  }

  /** Each kernel thread's name, state and whether SIGINT is pending or blocked there (from /proc). */
  signals(): Promise<{ main: number; threads: KernelThread[] }> {
    return this.ask({ op: "signals" });
  }

  /** The last STDERR_TAIL_CHARS characters the harness and its kernel wrote to stderr. */
  stderrTail(): string {
    return this.stderr;
  }

  /** Shuts the kernel down and removes the harness's temp dirs; kills the harness if it hangs. */
  async close(): Promise<void> {
    this.child.stdin.end(JSON.stringify({ op: "quit" }) + "\n");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), HARNESS_QUIT_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
    this.removeDir();
  }

  private async ask<T>(command: object): Promise<T> {
    this.child.stdin.write(JSON.stringify(command) + "\n");
    const answer = JSON.parse(await this.next()) as T & { failed?: string; kernel_alive?: boolean };
    if (answer.failed !== undefined) {
      throw new Error(`kernel harness: ${JSON.stringify(command)} failed (kernel alive: ${answer.kernel_alive})\n${answer.failed}\nstderr:\n${this.stderr}`);
    }
    return answer;
  }

  private next(): Promise<string> {
    const ready = this.answers.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kernel harness did not answer:\n${this.stderr}`)), HARNESS_ANSWER_LIMIT_MS);
      this.waiting = (line) => {
        clearTimeout(timer);
        resolve(line);
      };
    });
  }
}
