/** Real kernels in short-lived temp dirs; every test removes what it made. */
import { join } from "node:path";
import { startKernel, type KernelClient, type KernelLaunchSpec, type StartKernelOptions, type StatusEvent } from "../../src/kernel/index.js";
import { testPython } from "./python.js";
import { tempDirs } from "../support/tempDirs.js";

export interface LogRecord {
  readonly level: string;
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

export function ipykernelSpec(interruptMode: KernelLaunchSpec["interruptMode"] = "signal"): KernelLaunchSpec {
  return { argv: [testPython(), "-m", "ipykernel_launcher", "-f", "{connection_file}"], interruptMode };
}

/** A temp dir (short, for IPC paths) removed by `cleanup`. */
export async function tempDir(cleanups: Array<() => Promise<void>>): Promise<string> {
  const dirs = tempDirs("ak-");
  cleanups.push(async () => dirs.cleanup());
  return dirs.make();
}

export interface TestKernel {
  readonly client: KernelClient;
  readonly runDir: string;
  readonly logs: LogRecord[];
  readonly statuses: StatusEvent[];
}

/** Starts a real ipykernel whose shutdown and run dir removal are registered in `cleanups`. */
export async function startTestKernel(
  cleanups: Array<() => Promise<void>>,
  overrides: Partial<StartKernelOptions> = {},
): Promise<TestKernel> {
  const dir = await tempDir(cleanups);
  const logs: LogRecord[] = [];
  const runDir = join(dir, "run");
  const client = await startKernel({
    spec: ipykernelSpec(),
    runDir,
    cwd: dir,
    log: (level, message, data) => logs.push({ level, message, data }),
    ...overrides,
  });
  cleanups.push(() => client.shutdown());
  const statuses: StatusEvent[] = [];
  client.onStatus((event) => statuses.push(event));
  return { client, runDir, logs, statuses };
}

/** Runs the registered cleanups newest first. */
export async function runCleanups(cleanups: Array<() => Promise<void>>): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** The concatenated stream text of a list of outputs. */
export function streamText(outputs: ReadonlyArray<{ header: { msg_type: string }; content: unknown }>): string {
  return outputs
    .filter((output) => output.header.msg_type === "stream")
    .map((output) => (output.content as { text: string }).text)
    .join("");
}

/** How long a stock ipykernel's cell is given to end after an interrupt was sent before the test sends another. */
export const SIGNAL_LANDING_MS = 5_000;

/**
 * `done` once it settles, interrupting once more if it has not SIGNAL_LANDING_MS after the first
 * interrupt went out. Linux may give a process-wide SIGINT to any thread of stock ipykernel that
 * does not block it, and Python then only sets its flag while the main thread sleeps on (seen on a
 * loaded CI machine; albedo's session kernels block SIGINT in their other threads). A person
 * presses interrupt again; so does the test, and says so.
 */
export async function endedByInterrupt<T>(client: KernelClient, done: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => (timer = setTimeout(() => resolve(LATE), SIGNAL_LANDING_MS)));
  const first = await Promise.race([done, late]);
  clearTimeout(timer);
  if (first !== LATE) return first as T;
  console.warn(`${what}: the interrupt did not end the cell within ${SIGNAL_LANDING_MS} ms; interrupting again`);
  await client.interrupt();
  return done;
}

const LATE = Symbol("late");
