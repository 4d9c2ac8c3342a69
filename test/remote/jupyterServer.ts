/**
 * A real Jupyter Server for one test file (K-12): a free loopback port, a random token, fresh
 * JUPYTER_* dirs, started detached (its own process group), polled on /api/status, and put down
 * by process group after (SIGTERM, wait, SIGKILL). Its log goes to a file the tests can read.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { openSync, closeSync } from "node:fs";
import { installDir } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { tempDir, type TempDir } from "../support/tempDirs.js";
import { HAVE_TEST_VENV, TEST_VENV } from "../support/testVenv.js";

/** The Jupyter test venv (test/support/testVenv.ts), which has jupyter-server and ipykernel. */
export const JUPYTER_VENV = TEST_VENV;
/** Whether the server can run here: the global setup made the venv, or said in one line why these suites are skipped. */
export const HAVE_JUPYTER_SERVER = HAVE_TEST_VENV;
/** Whether Jupyter Enterprise Gateway is installed in that venv (it is not on the package index here). */
export const HAVE_ENTERPRISE_GATEWAY = existsSync(join(JUPYTER_VENV, "bin", "jupyter-enterprisegateway"));
/** From spawn to /api/status answering 200. */
export const SERVER_READY_TIMEOUT_MS = 60_000;
/** How often /api/status is polled while the server starts. */
export const SERVER_POLL_MS = 100;
/** From SIGTERM to the process group gone, before SIGKILL. */
export const SERVER_SIGTERM_TIMEOUT_MS = 10_000;

export interface JupyterServerOptions {
  /** "gateway" starts Jupyter Enterprise Gateway from the same venv instead (polled on /api: it has no /api/status). */
  readonly kind?: "server" | "gateway";
  /** The server's log level; DEBUG logs every request URL, which is what the token test reads. */
  readonly logLevel?: "INFO" | "DEBUG";
  /** Extra kernelspecs: name -> kernel.json content. */
  readonly kernelspecs?: Readonly<Record<string, unknown>>;
  readonly extraArgs?: readonly string[];
  /** Load docs/examples/jupyter_server_nodelay.py: TCP_NODELAY on kernel WebSockets, the server-side fix docs/remote.md describes. */
  readonly nodelay?: boolean;
}

export interface JupyterServer {
  readonly url: string;
  readonly token: string;
  readonly python: string;
  /** The server's log so far. */
  log(): Promise<string>;
  /** GET on the REST API with the token; returns the parsed JSON body. */
  get(path: string): Promise<unknown>;
  stop(): Promise<void>;
}

/** Starts a server; throws with its log when it does not answer in SERVER_READY_TIMEOUT_MS. */
export async function startJupyterServer(options: JupyterServerOptions = {}): Promise<JupyterServer> {
  const root = tempDir("alb-jsv-");
  try {
    return await launch(root, options);
  } catch (error) {
    root.remove();
    throw error;
  }
}

async function launch({ dir: root, remove }: TempDir, options: JupyterServerOptions): Promise<JupyterServer> {
  const dirs = { config: join(root, "config"), data: join(root, "data"), runtime: join(root, "runtime"), notebooks: join(root, "nb") };
  await Promise.all(Object.values(dirs).map((dir) => mkdir(dir, { recursive: true })));
  for (const [name, spec] of Object.entries(options.kernelspecs ?? {})) {
    await mkdir(join(dirs.data, "kernels", name), { recursive: true });
    await writeFile(join(dirs.data, "kernels", name, "kernel.json"), JSON.stringify(spec));
  }
  if (options.nodelay) await copyFile(join(installDir(), "docs", "examples", "jupyter_server_nodelay.py"), join(dirs.config, "jupyter_server_config.py"));
  const port = await freePort();
  const token = randomBytes(24).toString("hex");
  const logFile = join(root, "server.log");
  const logFd = openSync(logFile, "a");
  const gateway = options.kind === "gateway";
  const app = gateway ? "EnterpriseGatewayApp" : "ServerApp";
  const child = spawn(join(JUPYTER_VENV, "bin", gateway ? "jupyter-enterprisegateway" : "jupyter-server"), [
    `--${app}.ip=127.0.0.1`, `--${app}.port=${port}`, `--${app}.port_retries=0`, `--${app}.log_level=${options.logLevel ?? "INFO"}`,
    ...(gateway
      ? [`--EnterpriseGatewayApp.auth_token=${token}`]
      : ["--ServerApp.open_browser=False", `--ServerApp.root_dir=${dirs.notebooks}`, ...(process.getuid?.() === 0 ? ["--allow-root"] : [])]),
    ...(options.extraArgs ?? []),
  ], {
    detached: true,
    stdio: ["ignore", logFd, logFd],
    env: {
      PATH: `${join(JUPYTER_VENV, "bin")}:${process.env.PATH ?? ""}`, HOME: root, JUPYTER_TOKEN: token,
      JUPYTER_CONFIG_DIR: dirs.config, JUPYTER_DATA_DIR: dirs.data, JUPYTER_RUNTIME_DIR: dirs.runtime,
      JUPYTER_PLATFORM_DIRS: "1", PYTHONUNBUFFERED: "1",
    },
  });
  closeSync(logFd);
  const url = `http://127.0.0.1:${port}/`;
  const server: JupyterServer = {
    url, token, python: join(JUPYTER_VENV, "bin", "python"),
    log: () => readFile(logFile, "utf8"),
    get: async (path) => (await fetch(`${url}${path}`, { headers: { Authorization: `token ${token}` } })).json(),
    stop: async () => {
      await stopGroup(child);
      remove();
    },
  };
  try {
    await waitReady(url, token, child, gateway ? "api" : "api/status");
  } catch (error) {
    const log = await server.log().catch(() => "");
    await stopGroup(child);
    throw new Error(`${String(error)}\n--- server log ---\n${log}`);
  }
  return server;
}

async function waitReady(url: string, token: string, child: ChildProcess, statusPath: string): Promise<void> {
  await poll(
    async () => {
      if (child.exitCode !== null) throw new Error(`jupyter-server exited with ${child.exitCode}`);
      return fetch(`${url}${statusPath}`, { headers: { Authorization: `token ${token}` } }).then((r) => r.ok, () => false);
    },
    { what: `the server to answer /${statusPath} (SERVER_READY_TIMEOUT_MS)`, timeoutMs: SERVER_READY_TIMEOUT_MS, intervalMs: SERVER_POLL_MS },
  );
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group is gone already
    }
  };
  signal("SIGTERM");
  const timer = new Promise<"late">((done) => setTimeout(() => done("late"), SERVER_SIGTERM_TIMEOUT_MS).unref());
  if ((await Promise.race([exited, timer])) === "late") {
    signal("SIGKILL");
    await exited;
  }
  // Kernels run in sessions of their own; whatever the server left behind goes with its parent check.
  signal("SIGKILL");
}

/** A loopback port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? done(address.port) : fail(new Error("no port"))));
    });
  });
}
