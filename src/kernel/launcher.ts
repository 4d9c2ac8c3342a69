/**
 * Spawns the kernel process and stops it with the signal half of the shutdown ladder (K-9).
 * The kernel leads its own process group, so signals reach whatever it started too.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import type { Writable } from "node:stream";
import type { WrappedLaunch } from "./kernel.js";
import type { Log } from "../platform/index.js";
import { MAX_STDERR_TAIL_LINES, SIGKILL_TIMEOUT_MS, SIGTERM_TIMEOUT_MS } from "./limits.js";

export const CONNECTION_FILE_PLACEHOLDER = "{connection_file}";

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface LaunchRequest {
  readonly launch: WrappedLaunch;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly log: Log;
}

export class KernelProcess {
  /** Settles when the process has exited (or failed to spawn, reported as code null). */
  readonly exited: Promise<ProcessExit>;
  private exit: ProcessExit | undefined;
  private readonly stderrLines: string[] = [];

  private constructor(private readonly child: ChildProcess, private readonly log: Log) {
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve((this.exit = { code, signal })));
      child.once("error", (error) => {
        this.remember(`spawn failed: ${error.message}`);
        resolve((this.exit = { code: null, signal: null }));
      });
    });
    child.stdout?.setEncoding("utf8").on("data", (text: string) => log("debug", "kernel stdout", { text }));
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      for (const line of text.split("\n")) if (line.length > 0) this.remember(line);
      log("debug", "kernel stderr", { text });
    });
  }

  /**
   * Starts the launch detached into its own process group, handing it its descriptors and its feed;
   * spawn failures surface through `exited`.
   */
  static launch(request: LaunchRequest): KernelProcess {
    const { argv, fds, feed } = request.launch;
    const [command, ...args] = argv;
    if (command === undefined) throw new Error("kernel argv is empty");
    const stdio: StdioOptions = ["ignore", "pipe", "pipe", ...fds, ...(feed === undefined ? [] : ["pipe" as const])];
    const child = spawn(command, args, { cwd: request.cwd, env: request.env, detached: true, stdio });
    if (feed !== undefined) {
      const pipe = child.stdio[3 + fds.length] as Writable | null;
      // A child that dies before reading its feed must not turn EPIPE into an uncaught error.
      pipe?.on("error", () => undefined);
      pipe?.end(feed);
    }
    return new KernelProcess(child, request.log);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  /** The last MAX_STDERR_TAIL_LINES lines the kernel wrote to stderr. */
  stderrTail(): string {
    return this.stderrLines.join("\n");
  }

  /** Sends `signal` to the kernel's process group; false when nothing received it. */
  signalGroup(signal: NodeJS.Signals): boolean {
    const pid = this.child.pid;
    if (pid === undefined) return false;
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Resolves true when the process exits within `ms`. */
  async waitExit(ms: number): Promise<boolean> {
    if (this.hasExited) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const exited = await Promise.race([this.exited.then(() => true as const), timeout]);
    clearTimeout(timer);
    return exited;
  }

  /** SIGTERM, wait SIGTERM_TIMEOUT_MS, SIGKILL, wait SIGKILL_TIMEOUT_MS; then sweeps the group. Never throws. */
  async terminate(): Promise<void> {
    if (!this.hasExited) {
      this.log("info", "kernel still running; sending SIGTERM", { pid: this.pid });
      this.signalGroup("SIGTERM");
      if (!(await this.waitExit(SIGTERM_TIMEOUT_MS))) {
        this.log("warn", "kernel ignored SIGTERM; sending SIGKILL", { pid: this.pid });
        this.signalGroup("SIGKILL");
        await this.waitExit(SIGKILL_TIMEOUT_MS);
      }
    }
    // Children the kernel started may still hold its group. While any member lives, the group id
    // cannot be handed to a new process; when none does, this finds nobody.
    this.signalGroup("SIGKILL");
  }

  private remember(line: string): void {
    this.stderrLines.push(line);
    if (this.stderrLines.length > MAX_STDERR_TAIL_LINES) this.stderrLines.shift();
  }
}

/** The kernel's own argv: the spec's with the placeholder replaced by `connectionFile`, then `extraArgv`. */
export function kernelArgv(specArgv: readonly string[], connectionFile: string, extraArgv: readonly string[] = []): string[] {
  return [...substituteConnectionFile(specArgv, connectionFile), ...extraArgv];
}

/** `argv` with every `{connection_file}` replaced; throws when the placeholder is missing. */
export function substituteConnectionFile(argv: readonly string[], connectionFile: string): string[] {
  if (!argv.some((arg) => arg.includes(CONNECTION_FILE_PLACEHOLDER))) {
    throw new Error(`kernel argv must contain the ${CONNECTION_FILE_PLACEHOLDER} placeholder: ${JSON.stringify(argv)}`);
  }
  return argv.map((arg) => arg.split(CONNECTION_FILE_PLACEHOLDER).join(connectionFile));
}
