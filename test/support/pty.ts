import { spawn } from "node:child_process";
import { join } from "node:path";

/** One step of a terminal script: wait for output matching `expect` (within `timeout` seconds; `new`: only output after the last match or the last keys sent), or type `send`. */
export type PtyStep = { readonly expect: string; readonly timeout?: number; readonly new?: boolean } | { readonly send: string };

/** What the terminal showed, how the command exited (null: it did not within the driver's deadline), and the step that timed out. */
export interface PtyRun {
  readonly transcript: string;
  readonly exit: number | null;
  readonly failed: PtyStep | null;
}

/** Upper bound on a whole terminal script, past which the driver is killed. */
const PTY_RUN_TIMEOUT_MS = 180_000;

/** Runs `argv` on a pseudo-terminal of `columns` (80 unless told; Python's pty module) and plays `steps` against it; the command never outlives the call. */
export function runOnPty(python: string, argv: readonly string[], steps: readonly PtyStep[], env: NodeJS.ProcessEnv, cwd: string, columns = 80): Promise<PtyRun> {
  const driver = join(import.meta.dirname, "pty_run.py");
  return new Promise((resolve, reject) => {
    const child = spawn(python, [driver, JSON.stringify(steps), "--columns", String(columns), "--", ...argv], { env: { ...env, TERM: "xterm" }, cwd, timeout: PTY_RUN_TIMEOUT_MS });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`pty driver exited ${code}: ${err}`));
      else resolve(JSON.parse(out) as PtyRun);
    });
  });
}
