import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { bridgeEnv, type KernelBridge } from "../bridge/index.js";
import { AppError } from "../errors/index.js";
import {
  resolveKernelLaunch, resolveRemoteKernel, startKernel, superviseKernel, RestartPolicy,
  type Disposable, type ExecuteFuture, type ExecuteOptions, type Kernel, type KernelLog, type KernelStatus, type RemoteKernelOptions, type RemoteOverride,
} from "../kernel/index.js";
import { RpcServer } from "../rpc/index.js";
import { installDir } from "../settings/paths.js";
import { discoverCatalog } from "../skills/index.js";
import type { Caller } from "../commands/index.js";
import { runCommand, type CommandHost } from "./commandRunner.js";
import { buildRoutes } from "./routes.js";
import { makeRunDir, sweepRunDirs } from "./runDirs.js";
import type { Settings } from "../settings/index.js";
import type { Sandbox, SandboxMode } from "../sandbox/index.js";
import { prepareKernelSandbox, sandboxInputsKey } from "./sandbox.js";
import { remoteReadGuard, startSessionRemoteKernel } from "./remoteKernel.js";
import { SkillAccess } from "./skillAccess.js";
import { buildView, readSelection, type ExtensionState, type SessionView } from "./view.js";

/** Bytes of randomness in a session id; short, because IPC socket paths live under it. */
export const SESSION_ID_BYTES = 6;
/** The IPython extension the kernel loads at start (K-3). */
export const KERNEL_EXTENSION = "albedo";

/**
 * Who runs the session's kernel: the session itself ("own"), or someone else (a notebook's
 * kernel, K-13) that connects to the session's RPC socket with `bridge()`.
 */
export type KernelOwnership = "own" | "external";

export interface SessionOptions {
  readonly workspace: string;
  readonly home: string;
  readonly stateDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly install?: string;
  readonly extensions?: Partial<ExtensionState>;
  /** The session scope of the settings (D-4): held by the session, narrower than project and global. */
  readonly sessionSettings?: Settings;
  /** A named kernelspec instead of the resolved interpreter (K-1). */
  readonly kernelspec?: string;
  /** Overrides the global `sandbox` setting for this session (K-10). */
  readonly sandbox?: SandboxMode;
  readonly log?: KernelLog;
  /** Progress lines for long waits (kernel boot), for terminals. */
  readonly onProgress?: (message: string) => void;
  /** "external": boot no kernel; one started elsewhere connects with `bridge()` (K-13). Default "own". */
  readonly kernel?: KernelOwnership;
  /** Run the kernel on this Jupyter Server (`--remote URL`, `POST /sessions {"remote": …}`), over the global `kernel.remote` settings (K-12). */
  readonly remote?: RemoteOverride;
}

export interface ReloadResult {
  readonly revision: string;
  readonly previousRevision: string;
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly skills: number;
}

/**
 * One session: a kernel, its private RPC channel, and the one view (catalog snapshot + commands)
 * both are served from. Reload swaps the view and the route table together (K-7); the kernel keeps
 * its process.
 */
export class Session implements CommandHost {
  private viewValue: SessionView;
  private kernelValue: Kernel | undefined;
  private sandboxValue: Sandbox | undefined;
  /** The one way to skill files: carries the sandbox's guard once the kernel is sandboxed. */
  private access = SkillAccess.unguarded;
  private reloading: Promise<unknown> = Promise.resolve();
  private readonly watchers: Disposable[] = [];
  private closed: Promise<void> | undefined;

  private constructor(
    readonly id: string,
    readonly runDir: string,
    private readonly options: SessionOptions,
    private readonly rpc: RpcServer,
    view: SessionView,
  ) {
    this.viewValue = view;
  }

  /** Opens a session: discovers the catalog, starts the RPC channel, boots the kernel. Cleans up on failure. */
  static async open(options: SessionOptions): Promise<Session> {
    const id = randomBytes(SESSION_ID_BYTES).toString("hex");
    await sweepRunDirs(options.stateDir);
    const runDir = await makeRunDir(options.stateDir);
    let session: Session | undefined;
    try {
      const extensions: ExtensionState = { skills: options.extensions?.skills ?? true };
      const view = await prepareView(options, extensions, options.sessionSettings ?? {});
      const rpc = new RpcServer({ runDir, logger: rpcLogger(options.log) });
      session = new Session(id, runDir, options, rpc, view);
      rpc.swapRoutes(buildRoutes(view, session, session.access));
      await rpc.start();
      if (options.kernel !== "external") await session.boot();
      return session;
    } catch (error) {
      if (session) await session.close();
      else await rm(runDir, { recursive: true, force: true });
      throw error;
    }
  }

  /** The current view; a caller that holds it keeps reading one consistent catalog. */
  get view(): SessionView {
    return this.viewValue;
  }

  /** The session's own kernel. Throws AppError conflict for an external kernel, kernel_died when there is none. */
  get kernel(): Kernel {
    if (this.options.kernel === "external") {
      throw new AppError("conflict", "this session's kernel belongs to a notebook or console outside albedo; run code and interrupts there");
    }
    if (this.kernelValue === undefined) throw new AppError("kernel_died", "the session has no kernel");
    return this.kernelValue;
  }

  private async boot(): Promise<void> {
    const install = this.options.install ?? installDir();
    // Only the global settings may choose the interpreter or a server: the project file sits in the kernel-writable workspace.
    const configured = this.viewValue.selection.scopes.global?.kernel ?? {};
    const remote = resolveRemoteKernel(configured.remote, this.options.remote, this.options.env);
    if (remote) return this.bootRemote(remote, install);
    const kernelspec = this.options.kernelspec ?? configured.kernelspec;
    const resolved = await resolveKernelLaunch({ ...(kernelspec ? { kernelspec } : {}), ...(configured.python ? { python: configured.python } : {}) }, this.options.env);
    const { sandbox, launch } = await prepareKernelSandbox({
      ...this.options, runDir: this.runDir, install, mode: this.options.sandbox, view: this.viewValue,
      warn: (message) => (this.options.log ?? defaultLog)("warn", message),
    }, resolved);
    this.sandboxValue = sandbox;
    if (sandbox.kind === "bwrap") this.access = new SkillAccess((real) => sandbox.guard(real));
    this.rpc.swapRoutes(buildRoutes(this.viewValue, this, this.access));
    this.options.onProgress?.(`starting kernel: ${launch.source}${sandbox.kind === "bwrap" ? " (sandboxed)" : ""}`);
    const pythonPath = [join(install, "kernel"), this.options.env.PYTHONPATH].filter(Boolean).join(":");
    const kernel = await startKernel({
      spec: launch,
      runDir: this.runDir,
      cwd: this.options.workspace,
      extraArgv: ["--ext", KERNEL_EXTENSION],
      extraEnv: {
        ...bridgeEnv(this.bridge()),
        PYTHONPATH: pythonPath,
      },
      ...(sandbox.wrap ? { wrap: sandbox.wrap } : {}),
      ...(this.options.log ? { log: this.options.log } : {}),
    });
    this.watch(kernel);
    this.watchers.push(superviseKernel(kernel, new RestartPolicy(), this.options.log ? { log: this.options.log } : {}));
  }

  /** A kernel on a Jupyter Server (K-12). Its server restarts it when it dies; the client boots it again. */
  private async bootRemote(remote: RemoteKernelOptions, install: string): Promise<void> {
    this.access = new SkillAccess(remoteReadGuard({ ...this.options, install }, this.viewValue));
    this.rpc.swapRoutes(buildRoutes(this.viewValue, this, this.access));
    this.options.onProgress?.(`starting a remote kernel on ${remote.url}`);
    const kernel = await startSessionRemoteKernel({
      remote, rpc: this.rpc, install, bridge: () => this.bridge(), ...(this.options.log ? { log: this.options.log } : {}),
    });
    this.watch(kernel);
  }

  private watch(kernel: Kernel): void {
    this.kernelValue = kernel;
    this.watchers.push(
      kernel.onInterrupt((event) => {
        if (event.msgId !== undefined) this.rpc.cancelCell(event.msgId, "the cell was interrupted");
      }),
      kernel.onStatus((event) => {
        if (event.status === "dead") this.rpc.failAll("kernel_died", `the kernel died: ${event.reason ?? "unknown reason"}`);
      }),
    );
  }

  /** Runs code in the kernel; outputs stream from the returned future. */
  execute(code: string, options: ExecuteOptions = {}): ExecuteFuture {
    return this.kernel.execute(code, options);
  }

  /** Interrupts the running cell; its pending RPC calls fail with `cancelled`. */
  async interrupt(): Promise<void> {
    await this.kernel.interrupt();
  }

  /** Runs a command for a caller against the current view. */
  invoke(name: string, input: unknown, caller: Caller = "user"): Promise<unknown> {
    return runCommand(this.viewValue, this, name, input, caller, this.access);
  }

  /** Re-runs discovery and swaps view and routes in one step (K-7). Reloads run one at a time. */
  reload(): Promise<ReloadResult> {
    const next = this.reloading.then(() => this.reloadNow());
    this.reloading = next.catch(() => undefined);
    return next;
  }

  /**
   * Rereads the settings files (and takes new session-scope settings when given) and rebuilds the
   * view from the same discovered snapshot: a preference change reaches prompt, menu and Python
   * together without walking skill files (D-2, O-4). Throws SettingsFileError for a malformed file.
   */
  updateSelection(sessionSettings?: Settings): Promise<SessionView> {
    const next = this.reloading.then(async () => {
      const previous = this.viewValue;
      const selection = await readSelection(this.options.stateDir, this.options.workspace, sessionSettings ?? previous.selection.scopes.session ?? {});
      this.swap(buildView(previous.discovered, previous.extensions, selection));
      return this.viewValue;
    });
    this.reloading = next.catch(() => undefined);
    return next;
  }

  private swap(view: SessionView): void {
    const routes = buildRoutes(view, this, this.access);
    // The two assignments below run with no await between them: no reader sees one without the other.
    this.viewValue = view;
    this.rpc.swapRoutes(routes);
  }

  private async reloadNow(): Promise<ReloadResult> {
    const previous = this.viewValue;
    const view = await prepareView(this.options, previous.extensions, previous.selection.scopes.session ?? {});
    this.swap(view);
    const before = new Set(previous.snapshot.skills.map((s) => s.name));
    const after = new Set(view.snapshot.skills.map((s) => s.name));
    return {
      revision: view.snapshot.revision,
      previousRevision: previous.snapshot.revision,
      added: [...after].filter((name) => !before.has(name)),
      removed: [...before].filter((name) => !after.has(name)),
      skills: after.size,
    };
  }

  /** The RPC methods the current view serves (K-5). */
  methods(): string[] {
    return buildRoutes(this.viewValue, this, this.access).methods();
  }

  /** What the kernel's sandbox and launch depend on (see sandboxInputsKey); equal keys mean an equal kernel. */
  sandboxKey(): string {
    const where = { ...this.options, install: this.options.install ?? installDir(), runDir: this.runDir };
    return sandboxInputsKey(where, this.viewValue, this.sandboxValue?.kind === "bwrap");
  }

  /** What a kernel needs to reach this session (K-4): the RPC endpoint, token and bounds, and the extensions. */
  bridge(): KernelBridge {
    return { ...this.rpc.kernelAccess(), extensions: this.viewValue.extensions.skills ? ["python", "skills"] : ["python"] };
  }

  status(): {
    id: string; kernel: KernelStatus | "none" | "external"; pid: number | undefined; sandbox: string; sandboxNotes: readonly string[];
    revision: string; skills: number; extensions: ExtensionState;
  } {
    const sandbox = this.sandboxValue;
    return {
      id: this.id,
      sandbox: sandbox?.kind ?? "none",
      // Paths the sandbox would not expose (e.g. a workspace skill root linked outside the workspace): served over RPC only.
      sandboxNotes: sandbox?.kind === "bwrap" ? sandbox.notes.map((note) => `${note.path}: ${note.message}`) : [],
      kernel: this.options.kernel === "external" ? "external" : (this.kernelValue?.status ?? "none"),
      pid: this.kernelValue?.pid,
      revision: this.viewValue.snapshot.revision,
      skills: this.viewValue.snapshot.skills.length,
      extensions: this.viewValue.extensions,
    };
  }

  modelInfo(): { adapter: string; detail: string } {
    return { adapter: "none", detail: "no model adapter is configured for this session; Python cells run directly" };
  }

  /** Shuts the kernel down (ladder), closes the RPC socket, removes the run dir. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private async closeNow(): Promise<void> {
    for (const watcher of this.watchers.splice(0)) watcher.dispose();
    try {
      await this.kernelValue?.shutdown();
    } finally {
      await this.rpc.close();
      await this.sandboxValue?.dispose();
      await rm(this.runDir, { recursive: true, force: true });
    }
  }
}

/** Discovery and the settings files, read side by side, into one view. */
async function prepareView(options: SessionOptions, extensions: ExtensionState, sessionSettings: Settings): Promise<SessionView> {
  const [discovered, selection] = await Promise.all([
    discoverCatalog({ workspace: options.workspace, home: options.home, ...(options.install ? { install: options.install } : {}) }),
    readSelection(options.stateDir, options.workspace, sessionSettings),
  ]);
  return buildView(discovered, extensions, selection);
}

function defaultLog(level: string, message: string): void {
  process.stderr.write(`albedo ${level}: ${message}\n`);
}

function rpcLogger(log: KernelLog | undefined) {
  return log === undefined ? undefined : (level: string, message: string, fields?: Record<string, unknown>) => log(level as "info", message, fields);
}
