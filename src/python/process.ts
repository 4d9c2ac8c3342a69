import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";

/** How much of a child's stdout and stderr is kept (the tail), in bytes each. */
export const MAX_CAPTURED_OUTPUT_BYTES = 64 * 1024;
/** Time a child gets between SIGTERM and SIGKILL once its deadline passed. */
export const KILL_GRACE_MS = 2_000;

export interface RunOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly cwd?: string;
  /** Receives output as it arrives (e.g. to stream pip when verbose). */
  readonly onOutput?: (chunk: Buffer, stream: "stdout" | "stderr") => void;
}

export interface RunResult {
  /** Exit code, or null when the child was killed by a signal or never started. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** Set when the child could not be started at all (e.g. ENOENT). */
  readonly spawnError?: string;
}

class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > MAX_CAPTURED_OUTPUT_BYTES && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  }
  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - MAX_CAPTURED_OUTPUT_BYTES)).toString("utf8");
  }
}

/** Runs a program to completion under a deadline; never throws, reports spawn failure and timeout in the result. */
export function runProcess(file: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    const out = new TailBuffer();
    const err = new TailBuffer();
    let timedOut = false;
    let spawnError: string | undefined;
    // Own process group, so a deadline also ends the child's children (pip build backends).
    const child = spawn(file, [...args], { env: options.env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const signalGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        child.kill(signal);
      }
    };
    let killTimer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      timedOut = true;
      signalGroup("SIGTERM");
      killTimer = setTimeout(() => signalGroup("SIGKILL"), KILL_GRACE_MS);
    }, options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      out.push(chunk);
      options.onOutput?.(chunk, "stdout");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err.push(chunk);
      options.onOutput?.(chunk, "stderr");
    });
    child.on("error", (error) => {
      spawnError = error.message;
    });
    child.on("close", (code, signal) => {
      clearTimeout(deadline);
      if (killTimer) clearTimeout(killTimer);
      resolve({ code, signal, stdout: out.text(), stderr: err.text(), timedOut, ...(spawnError ? { spawnError } : {}) });
    });
  });
}

/** True when `path` is a regular file (after links) that the current user may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
