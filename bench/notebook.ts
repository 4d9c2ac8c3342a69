/**
 * Sandboxed notebook kernels (K-14), driven from the Jupyter test venv's jupyter_client against a
 * real daemon: `execute`, a trivial execute through the launcher's relay (a child process on TCP
 * ports, as JupyterLab writes them) against the same kernel reached straight at its IPC sockets;
 * `open`, kernel start to ready from the albedo kernelspec (launcher, daemon session, sandboxed
 * kernel) against an unsandboxed ipykernel from the same interpreter.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { envFor, makeDirs, ROOT, startDaemon, type DaemonProcess, type Dirs } from "../test/daemon/support/daemon.js";
import { HAVE_JUPYTER_SERVER, JUPYTER_VENV } from "../test/remote/jupyterServer.js";
import { goal, limitGoal } from "./goals.js";
import { NO_TEST_VENV } from "../test/support/testVenv.js";
import { round } from "./stats.js";

const DRIVER = join(ROOT, "bench", "python", "notebook_bench.py");
/** Executes timed each way (after a warm-up batch). */
const EXECUTES = 500;
/** Kernel starts timed each way (after a warm-up start). */
const OPENS = 5;
/** Goals: the relay's cost per execute, absolute; a notebook kernel's start against an unsandboxed one. */
const RELAY_EXECUTE_TARGET_MS = 0.3;
const OPEN_BOUND = 1.2;
/** The longest one driver run may take. */
const DRIVER_TIMEOUT_MS = 600_000;

async function driver(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Record<string, number>> {
  const { stdout } = await promisify(execFile)(join(JUPYTER_VENV, "bin", "python"), [DRIVER, ...args], { env, cwd, timeout: DRIVER_TIMEOUT_MS });
  return JSON.parse(stdout) as Record<string, number>;
}

/** The albedo kernelspec and a plain ipykernel one from the same interpreter, under `root`; the JUPYTER_PATH that finds them. */
async function kernelspecs(root: string): Promise<string> {
  const prefix = join(root, "p");
  const installed = spawnSync(process.execPath, [join(ROOT, "bin", "albedo"), "kernelspec", "install", "--prefix", prefix], { encoding: "utf8" });
  if (installed.status !== 0) throw new Error(`albedo kernelspec install failed: ${installed.stderr}`);
  const kernels = join(prefix, "share", "jupyter", "kernels");
  // The interpreter albedo's kernelspec runs, so the two differ only in what albedo adds.
  const python = (JSON.parse(await readFile(join(kernels, "albedo", "kernel.json"), "utf8")) as { argv: string[] }).argv[0]!;
  await mkdir(join(kernels, "plain"), { recursive: true });
  const plain = { argv: [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"], display_name: "plain", language: "python" };
  await writeFile(join(kernels, "plain", "kernel.json"), JSON.stringify(plain));
  return join(prefix, "share", "jupyter");
}

export async function benchNotebook(): Promise<Record<string, unknown>> {
  if (!HAVE_JUPYTER_SERVER) return { skipped: NO_TEST_VENV };
  let dirs: Dirs | undefined;
  let daemon: DaemonProcess | undefined;
  try {
    dirs = await makeDirs();
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    const env = { ...envFor(dirs), JUPYTER_PATH: await kernelspecs(dirs.root), PYTHONPATH: join(ROOT, "kernel") };
    const execute = await driver(["execute", String(EXECUTES)], env, dirs.workspace);
    const open = await driver(["open", String(OPENS)], env, dirs.workspace);
    const relayCost = execute.relayed_ms! - execute.direct_ms!;
    return {
      execute: {
        relayed_ms: round(execute.relayed_ms!), direct_ms: round(execute.direct_ms!), relay_cost_ms: round(relayCost),
        relayed_p95_ms: round(execute.relayed_p95_ms!), direct_p95_ms: round(execute.direct_p95_ms!), executes: execute.executes,
        note: "median per trivial execute from jupyter_client, through the launcher's relay (TCP) and straight to the kernel's IPC sockets; the goal is on the difference",
        ...limitGoal(Math.max(relayCost, 0), RELAY_EXECUTE_TARGET_MS),
      },
      open: {
        albedo_ms: round(open.albedo_ms!), plain_ms: round(open.plain_ms!), runs: open.runs,
        session_open_ms: round(execute.session_open_ms!), launcher_start_ms: round(open.launcher_start_ms!),
        note: "kernel start to ready (jupyter_client's wait_for_ready): the albedo kernelspec (launcher, daemon session, sandboxed kernel, no spare: its key is the notebook's) against a plain, unsandboxed ipykernel; session_open_ms is the daemon's part (a cold sandboxed kernel booted to ready), launcher_start_ms the launcher's interpreter and imports",
        ...goal(open.albedo_ms!, open.plain_ms!, OPEN_BOUND),
      },
    };
  } finally {
    if (daemon) {
      daemon.process.kill("SIGTERM");
      await daemon.exited;
    }
    await dirs?.cleanup();
  }
}
