import { randomBytes } from "node:crypto";
import { realpath, rm } from "node:fs/promises";
import type { KernelBridge } from "../bridge/index.js";
import type { Kernel, RemoteOverride } from "../kernel/index.js";
import { RpcServer } from "../rpc/index.js";
import { CommandSet } from "./commands.js";
import { disposePlan, guardOf, planKernel, type KernelPlan } from "./kernelPlan.js";
import { KernelSlot, type RelayTarget } from "./kernelSlot.js";
import { buildRoutes } from "./rpcMethods.js";
import { mcpSecretEnvNames, type SessionMcpOptions } from "./mcp.js";
import { McpServers } from "./mcpServers.js";
import { MCP_PROGRESS_NOTIFICATION, MCP_RELOADED_NOTIFICATION } from "./rpcApi.js";
import type { McpProgressNotice } from "./mcpMethods.js";
import type { SharedServers } from "../mcp/index.js";
import { makeRunDir, privateSocketFor, sweepRunDirs } from "./runDirs.js";
import type { Settings } from "../settings/index.js";
import type { NetworkSetting } from "../network/index.js";
import type { Sandbox, SandboxMode } from "../sandbox/index.js";
import { sandboxInputsKey } from "./sandbox.js";
import { SkillFiles } from "./skills.js";
import type { ExtensionState, ReloadResult, SessionView } from "./view.js";
import { ModelUsage } from "./usage.js";
import { ParseCache } from "../skills/index.js";
import { prepareView, ViewKeeper } from "./viewKeeper.js";
import { installDir, type Log } from "../platform/index.js";
import { ImageStore } from "../images/index.js";
import { RECEIPT_TTL_MS } from "../operations/index.js";
import type { SessionPort, SessionStatusReport } from "./port.js";
import { AppError } from "../errors/index.js";
import { checkpointPaths, copyCheckpoint, makeCheckpointDir, markCheckpointClosed, resumableCheckpoint, sweepCheckpoints, type RestoreReport } from "./checkpoints.js";
import { KernelRestores } from "./restores.js";
import { KernelNetwork } from "./network.js";

/** Bytes of randomness in a session id; short, because IPC socket paths live under it. */
export const SESSION_ID_BYTES = 6;

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
  readonly log?: Log;
  /** Progress lines for long waits (kernel boot), for terminals. */
  readonly onProgress?: (message: string) => void;
  /** "external": boot no kernel; one started elsewhere connects with `bridge()` (K-13). Default "own". */
  readonly kernel?: KernelOwnership;
  /**
   * A notebook's relay (K-14): the own kernel signs with the notebook's HMAC key, so the relay can
   * pass Jupyter's frames untouched, and is not restarted when it dies (Jupyter restarts it).
   */
  readonly relayKey?: string;
  /** The own kernel's working directory: a directory inside the workspace (a notebook's, K-14); the workspace when absent. */
  readonly kernelCwd?: string;
  /** Run the kernel on this Jupyter Server (`--remote URL`, `POST /sessions {"remote": …}`), over the global `kernel.remote` settings (K-12). */
  readonly remote?: RemoteOverride;
  /** The daemon's pool of MCP server processes for entries marked `"shared": true` (M-2). */
  readonly mcpShared?: SharedServers;
  /** Start from the checkpoint of this closed session (K-15): its names are loaded before the first cell. */
  readonly resume?: string;
  /** Checkpoint the namespace after each cell (K-15); default: the global `kernel.checkpoints`, else on. */
  readonly checkpoints?: boolean;
  /** This session's own network setting in place of the global one (N-1); the caller checked it (`true` only where the settings allow it). */
  readonly network?: NetworkSetting;
}

/**
 * One session: a kernel, its private RPC channel, and the one view (catalog snapshot + commands)
 * both are served from. Reload swaps the view and the route table together (K-7); the kernel keeps
 * its process. What it keeps are its members (see SessionPort): the kernel, the catalog (the one
 * owner of its catalog work: reloads, settings refreshes and walks run on its one chain), the
 * skills' files, the commands, the MCP servers, the images and the model's usage.
 */
export class Session implements SessionPort {
  private readonly slot: KernelSlot;
  readonly catalog: ViewKeeper;
  readonly skills: SkillFiles;
  readonly commands: CommandSet;
  readonly mcp: McpServers;
  /** The images shown by this session's cells and turns (I-3): kept once by content, under the session's quota, for as long as receipts. */
  readonly images: ImageStore;
  readonly usage: ModelUsage;
  readonly restores: KernelRestores;
  readonly network: KernelNetwork;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly id: string,
    readonly runDir: string,
    private readonly options: SessionOptions,
    private readonly rpc: RpcServer,
    view: SessionView,
    parses: ParseCache,
    private readonly plan: KernelPlan,
    mcp: McpServers,
    /** The directory this session's kernel writes its checkpoint into; undefined when checkpoints are off. */
    private readonly checkpointDir: string | undefined,
  ) {
    const currentView = () => this.view;
    this.slot = new KernelSlot(options.kernel === "external");
    this.mcp = mcp;
    this.skills = new SkillFiles(guardOf(plan), currentView);
    this.commands = new CommandSet(currentView, this, this.skills.access);
    this.usage = new ModelUsage(currentView, options.stateDir);
    this.restores = new KernelRestores(checkpointDir, options.resume !== undefined);
    this.network = new KernelNetwork(plan, options, currentView);
    this.images = new ImageStore(options.stateDir, { retentionMs: RECEIPT_TTL_MS });
    this.catalog = new ViewKeeper(options, view, (next) => {
      const routes = this.routesFor(next);
      return () => this.rpc.swapRoutes(routes);
    }, parses);
  }

  private routesFor(view: SessionView) {
    const mcp = this.mcp.current;
    const progress = (notice: McpProgressNotice) => this.rpc.notify(MCP_PROGRESS_NOTIFICATION, notice);
    return buildRoutes(view, this, this.skills.access, mcp && { ...mcp, progress });
  }

  /** Opens a session: discovers the catalog, plans its kernel, starts the RPC channel, boots the kernel. Cleans up on failure. */
  static async open(options: SessionOptions): Promise<Session> {
    const id = randomBytes(SESSION_ID_BYTES).toString("hex");
    await sweepRunDirs(options.stateDir);
    await sweepCheckpoints(options.stateDir, RECEIPT_TTL_MS);
    if (options.resume !== undefined) await checkResumable(options.stateDir, options.resume, options.workspace);
    const runDir = await makeRunDir(options.stateDir);
    let checkpointDir: string | undefined;
    let plan: KernelPlan | undefined;
    let mcp: McpServers | undefined;
    let session: Session | undefined;
    try {
      const extensions: ExtensionState = { skills: options.extensions?.skills ?? true };
      const parses = new ParseCache();
      const view = await prepareView(options, extensions, options.sessionSettings ?? {}, parses);
      // The servers start now and come up while the kernel is planned and boots.
      mcp = await McpServers.open(mcpOptionsOf(options, runDir), view);
      checkpointDir = await checkpointDirFor(options, view, id);
      plan = await planKernel(options, view, runDir, options.install ?? installDir(), (message: string) => (options.log ?? defaultLog)("warn", message), checkpointDir);
      if (plan.kind !== "local" && checkpointDir !== undefined) {
        await rm(checkpointPaths(options.stateDir, id).dir, { recursive: true, force: true });
        checkpointDir = undefined;
      }
      if (options.resume !== undefined) {
        if (checkpointDir === undefined) throw new AppError("conflict", "cannot resume: this session does not checkpoint (kernel.checkpoints is false, or its kernel is remote or a notebook's)");
        copyCheckpoint(options.stateDir, options.resume, checkpointDir);
      }
      const rpc = new RpcServer({ runDir, privateSocket: await privateSocketFor(options.stateDir, runDir), logger: rpcLogger(options.log) });
      session = new Session(id, runDir, options, rpc, view, parses, plan, mcp, checkpointDir);
      rpc.swapRoutes(session.routesFor(view));
      await rpc.start();
      await session.boot();
      return session;
    } catch (error) {
      if (session) await session.close();
      else {
        await mcp?.close();
        await disposePlan(plan);
        await rm(runDir, { recursive: true, force: true });
        if (checkpointDir !== undefined) await rm(checkpointPaths(options.stateDir, id).dir, { recursive: true, force: true });
      }
      throw error;
    }
  }

  private boot(): Promise<void> {
    const { options } = this;
    return this.slot.boot({
      plan: this.plan,
      install: options.install ?? installDir(),
      cwd: options.kernelCwd ?? options.workspace,
      runDir: this.runDir,
      env: options.env,
      rpc: this.rpc,
      bridge: () => this.bridge(),
      startEnv: () => this.restores.startEnv(),
      onReady: () => this.restores.started(),
      onDead: () => this.restores.died(),
      withoutEnv: () => [...secretEnvNames(this.view.selection.scopes.global ?? {}), ...mcpSecretEnvNames(this.view.selection.scopes)],
      ...(options.relayKey !== undefined ? { relayKey: options.relayKey } : {}),
      ...(options.log ? { log: options.log } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
  }

  get view(): SessionView {
    return this.catalog.view;
  }

  get workspace(): string {
    return this.view.discovered.workspace;
  }

  get stateDir(): string {
    return this.options.stateDir;
  }

  /** The session's own kernel. Throws AppError conflict for an external kernel, kernel_died when there is none. */
  get kernel(): Kernel {
    return this.slot.current;
  }

  /** Where a notebook's relay reaches this session's kernel (K-14); undefined unless the session was opened for a relay and its kernel runs. */
  relayTarget(): RelayTarget | undefined {
    return this.slot.relayTarget(this.options.relayKey !== undefined);
  }

  async restart(restore: boolean): Promise<RestoreReport | undefined> {
    const kernel = this.slot.restartable(this.options.relayKey !== undefined);
    this.restores.beforeRestart(restore);
    await kernel.restart(restore ? "restart with restore requested" : "restart requested");
    return restore ? this.restores.last : undefined;
  }

  /**
   * Re-runs discovery and swaps view and routes in one step (K-7), on the session's one chain;
   * then restarts the MCP servers whose entry changed, or starts the first ones configured since
   * the open (M-2). Answers what changed in both.
   */
  async reload(): Promise<ReloadResult> {
    const catalog = await this.catalog.reload();
    const session = this;
    const mcp = await this.mcp.reload(this.view, {
      serveRoutes: () => this.rpc.swapRoutes(this.routesFor(this.view)),
      // The kernel hears of servers it has no object for, and the deadline `mcp.call` may need.
      announce: (servers) => this.rpc.notify(MCP_RELOADED_NOTIFICATION, { servers, deadline_ms: this.rpc.kernelAccess().deadlineMs }),
      get closing() {
        return session.closed !== undefined;
      },
    });
    return { ...catalog, mcp };
  }

  methods(): string[] {
    return this.rpc.routes.methods();
  }

  private get sandbox(): Sandbox | undefined {
    return this.plan.kind === "local" ? this.plan.sandbox : undefined;
  }

  /** What the kernel's sandbox and launch depend on (see sandboxInputsKey); equal keys mean an equal kernel. */
  sandboxKey(): string {
    const where = { ...this.options, install: this.options.install ?? installDir(), runDir: this.runDir };
    return sandboxInputsKey(where, this.view, this.sandbox?.kind === "bwrap");
  }

  bridge(): KernelBridge {
    return { ...this.rpc.kernelAccess(), extensions: ["python", ...(this.view.extensions.skills ? ["skills" as const] : []), ...(this.mcp.current ? ["mcp" as const] : [])] };
  }

  status(): SessionStatusReport {
    const sandbox = this.sandbox;
    return {
      id: this.id,
      sandbox: sandbox?.kind ?? "none",
      // Paths the sandbox would not expose (e.g. a workspace skill root linked outside the workspace): served over RPC only.
      sandboxNotes: sandbox?.kind === "bwrap" ? sandbox.notes.map((note) => `${note.path}: ${note.message}`) : [],
      kernel: this.slot.status,
      pid: this.slot.pid,
      revision: this.view.snapshot.revision,
      skills: this.view.snapshot.skills.length,
      extensions: this.view.extensions,
      usage: this.usage.totals ?? null,
      checkpoints: this.restores.enabled,
      restore: this.restores.last ?? null,
    };
  }

  /** Shuts the kernel down (ladder), closes the RPC socket, removes the run dir. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private async closeNow(): Promise<void> {
    try {
      await Promise.all([this.slot.shutdown(), this.mcp.close()]);
    } finally {
      await this.rpc.close();
      await disposePlan(this.plan);
      await rm(this.runDir, { recursive: true, force: true });
      // The checkpoint stays, resumable, for the receipts' retention.
      if (this.checkpointDir !== undefined) await markCheckpointClosed(this.options.stateDir, this.id);
    }
  }
}

/** Throws unless session `id` has a checkpoint to resume, taken on `workspace` (AppError not_found, conflict, invalid_params). */
async function checkResumable(stateDir: string, id: string, workspace: string): Promise<void> {
  const record = await resumableCheckpoint(stateDir, id);
  const real = (path: string) => realpath(path).catch(() => path);
  if ((await real(record.workspace)) !== (await real(workspace))) {
    throw new AppError("invalid_params", `session ${id} ran on the workspace ${record.workspace}, not ${workspace}; resume it there`);
  }
}

/**
 * Makes the session's checkpoint directory when it checkpoints: its own kernel (not a notebook's,
 * which Jupyter restarts empty, nor an external one) with the global `kernel.checkpoints` not false.
 */
async function checkpointDirFor(options: SessionOptions, view: SessionView, id: string): Promise<string | undefined> {
  const configured = view.selection.scopes.global?.kernel?.checkpoints;
  if (options.kernel === "external" || options.relayKey !== undefined || !(options.checkpoints ?? configured ?? true)) return undefined;
  return await makeCheckpointDir(options.stateDir, id, options.workspace);
}

function defaultLog(level: string, message: string): void {
  process.stderr.write(`albedo ${level}: ${message}\n`);
}

/** How a session's MCP servers run: beside its workspace, with its log (warnings only when embedded) and the daemon's shared pool. */
function mcpOptionsOf(options: SessionOptions, runDir: string): SessionMcpOptions {
  return { ...options, runDir, log: options.log ?? warningsOnly, ...(options.mcpShared ? { shared: options.mcpShared } : {}) };
}

/** An embedded session's MCP log (no daemon log to keep the rest): a server's stderr and each call are not the terminal's business. */
function warningsOnly(level: string, message: string): void {
  if (level === "warn" || level === "error") defaultLog(level, message);
}

function rpcLogger(log: Log | undefined) {
  return log === undefined ? undefined : (level: string, message: string, fields?: Record<string, unknown>) => log(level as "info", message, fields);
}

/** Environment variables a kernel must not inherit: the one the global settings name for the model's API key. */
function secretEnvNames(global: Settings): string[] {
  return global.model?.api_key_env === undefined ? [] : [global.model.api_key_env];
}
