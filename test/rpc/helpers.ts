import { spawn } from "node:child_process";
import path from "node:path";
import { bridgeEnv, EXTENSION_NAMES, type KernelBridge } from "../../src/bridge/index.js";
import type { RpcServer } from "../../src/rpc/index.js";
import type { Log } from "../../src/platform/index.js";
import { tempDir, type TempDir } from "../support/tempDirs.js";

/** The interpreter with ipykernel and pyzmq; override with ALBEDO_TEST_PYTHON. */
export const PYTHON = process.env.ALBEDO_TEST_PYTHON ?? path.resolve(".venv/bin/python");
/** Directory holding the `albedo` package, put on PYTHONPATH. */
export const KERNEL_DIR = path.resolve("kernel");
/** Longest a spawned Python helper may run before the test kills it. */
export const PYTHON_RUN_LIMIT_MS = 45_000;

export interface LogEntry {
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown> | undefined;
}

/** A logger that records entries for assertions. */
export function recordingLogger(): { logger: Log; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  return { logger: (level, message, fields) => entries.push({ level, message, fields }), entries };
}

/** The environment that connects a kernel or script to `server` (every extension on), with `overrides` applied. */
export function kernelEnv(server: RpcServer, overrides: Partial<KernelBridge> = {}): Record<string, string> {
  return bridgeEnv({ ...server.kernelAccess(), extensions: EXTENSION_NAMES, ...overrides });
}

/** A short private temp dir (Unix socket paths are limited); returns it and a remover. */
export function makeRunDir(): TempDir {
  return tempDir("alb-rpc-");
}

export interface PythonResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `code` with the test interpreter and `env` added; resolves when it exits (killed past the limit). */
export function runPython(code: string, env: Record<string, string>): Promise<PythonResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ["-c", code], {
      env: { ...process.env, ...env, PYTHONPATH: KERNEL_DIR, PYTHONUNBUFFERED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), PYTHON_RUN_LIMIT_MS);
    child.on("error", reject);
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ code: exitCode, stdout, stderr });
    });
  });
}

/** The JSON printed on the last stdout line of a Python helper; throws with its stderr when absent. */
export function lastJson(result: PythonResult): any {
  const line = result.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`no JSON result (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}
