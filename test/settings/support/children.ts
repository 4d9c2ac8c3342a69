import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { poll } from "../../support/poll.js";

const LOADER = fileURLToPath(new URL("./tsLoader.mjs", import.meta.url));

/** A child node process running a TypeScript script through the test loader. */
export interface Child {
  readonly process: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Resolves with the exit code (or signal) once the process is gone and reaped. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node --import tsLoader.mjs script ...args`, through `wrap` when given (e.g. OWN_PID_NAMESPACE); the caller must kill or await it. */
export function startChild(script: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env, wrap: readonly string[] = []): Child {
  const argv = [...wrap, process.execPath, "--import", LOADER, script, ...args];
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      if (code !== 0 && signal === null && err.length > 0) process.stderr.write(`child ${script} failed:\n${err}\n`);
      resolve({ code, signal });
    });
  });
  return { process: child, stdout: () => out, exited };
}

/** How long a child may take to print what a test waits for: it boots TypeScript through a loader. */
const CHILD_OUTPUT_TIMEOUT_MS = 120_000;

/** Resolves when `predicate` holds for the child's stdout; rejects if the child exits first or after CHILD_OUTPUT_TIMEOUT_MS. */
export async function waitForOutput(child: Child, predicate: (out: string) => boolean): Promise<void> {
  let gone = false;
  void child.exited.then(() => (gone = true));
  await poll(() => {
    if (predicate(child.stdout())) return true;
    if (gone) throw new Error(`child exited before the expected output; stdout so far: ${child.stdout().slice(-500)}`);
    return false;
  }, { what: "the child's expected output", timeoutMs: CHILD_OUTPUT_TIMEOUT_MS });
}

/** Kills the child with SIGKILL if it still runs and waits until it is reaped. */
export async function killChild(child: Child): Promise<void> {
  if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  await child.exited;
}
