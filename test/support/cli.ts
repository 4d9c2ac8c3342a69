import { spawn } from "node:child_process";
import { join } from "node:path";

/** The CLI as users run it: the compiled binary. */
export const ALBEDO_BIN = join(import.meta.dirname, "..", "..", "bin", "albedo");
/** Liveness bound for one CLI process. */
export const CLI_PROCESS_TIMEOUT_MS = 60_000;

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `albedo ARGS` to its end with stdin closed (or given `stdin`); never outlives `timeoutMs` (CLI_PROCESS_TIMEOUT_MS by default). */
export function runAlbedo(args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number }): Promise<CliRun> {
  return runProgram(process.execPath, [ALBEDO_BIN, ...args], options);
}

/** Runs `command ARGS` to its end as runAlbedo does. */
export function runProgram(command: string, args: readonly string[], options: { cwd?: string; env: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? CLI_PROCESS_TIMEOUT_MS });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}
