import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { bridgeEnv, type KernelBridge } from "../bridge/index.js";
import { AppError } from "../errors/index.js";
import {
  channelAddress, CHANNELS, startKernel, superviseKernel, RestartPolicy,
  type ChannelName, type ExecuteFuture, type ExecuteOptions, type Kernel, type KernelClient, type KernelStatus, type RemoteKernelOptions, type RemoteOverride,
} from "../kernel/index.js";
import { RpcServer } from "../rpc/index.js";
import type { Caller } from "../commands/index.js";
import { commandContext, invokeCommand, prepareCommand, type CommandHost, type PreparedCommand } from "./commands.js";
import { SESSION_KERNEL_ARGV } from "./kernelArgv.js";
import { disposePlan, guardOf, planKernel, type KernelPlan } from "./kernelPlan.js";
import { buildRoutes } from "./rpcMethods.js";
import { configuresMcp, mcpSecretEnvNames, SessionMcp, type SessionMcpOptions } from "./mcp.js";
import { mcpTurnFace, type McpCallObserver } from "./mcpMethods.js";
import { MCP_RELOADED_NOTIFICATION } from "./rpcApi.js";
import { NO_MCP_CHANGE, type McpReloadChange, type McpServerStatus, type SharedServers } from "../mcp/index.js";
import { makeRunDir, privateSocketFor, sweepRunDirs } from "./runDirs.js";
import { globalSettingsTarget, type Settings } from "../settings/index.js";
import type { Sandbox, SandboxMode } from "../sandbox/index.js";
import { compilePolicy, describeNetwork, type EgressCounts, type NetworkSetting, type SessionEgress } from "../network/index.js";
import { projectNetworkNote } from "./sandbox.js";
import { sandboxInputsKey } from "./sandbox.js";

/** The session's network as its resource shows it (see Session.networkState). */
export interface NetworkState {
  readonly mode: "off" | "policy" | "open" | "unenforced";
  readonly text: string;
  readonly hosts: number;
  readonly from: "global" | "session";
  readonly setting: NetworkSetting;
  readonly counts: EgressCounts;
  readonly diagnostics: readonly string[];
}
import { startSessionRemoteKernel } from "./remoteKernel.js";
import { requireSkill, SkillAccess, type ActivationObserver } from "./skillAccess.js";
import type { ExtensionState, ReloadResult, SessionView } from "./view.js";
import { describeModelSettings, sumUsage, type UsageTotals } from "../model/index.js";
import { ParseCache, type Activation, type ReadResult, type ResourceListing, type SkillEntry } from "../skills/index.js";
import { prepareView, ViewKeeper, type CatalogWalk, type SelectionChange } from "./viewKeeper.js";
import { type Disposable, installDir, type Log } from "../platform/index.js";
import { ImageStore } from "../images/index.js";
import { RECEIPT_TTL_MS } from "../operations/index.js";

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
  /** Run the kernel on this Jupyter Server (`--remote URL`, `POST /sessions {"remote": …}`), over the global `kernel.remote` settings (K-12). */
  readonly remote?: RemoteOverride;
  /** The daemon's pool of MCP server processes for entries marked `"shared": true` (M-2). */
  readonly mcpShared?: SharedServers;
}

/**
 * One session: a kernel, its private RPC channel, and the one view (catalog snapshot + commands)
 * both are served from. Reload swaps the view and the route table together (K-7); the kernel keeps
 * its process. The session is the one owner of its catalog work: reloads, settings refreshes and
 * walks of the files run on its one chain, and whether it needs a reload comes from its last walk.
 */
export class Session implements CommandHost {
  private readonly views: ViewKeeper;
  private kernelValue: Kernel | undefined;
  /** The kernel process this machine runs for the session, when it runs one (not a remote or external kernel). */
  private localKernel: KernelClient | undefined;
  /** Told of activations the kernel's code makes while a turn's python tool runs (visible pulls). */
  private readonly activationObservers = new Set<ActivationObserver>();
  /** The tokens this session's turns used, as their endpoints reported them (O-10); undefined until one did. */
  private usageTotals: UsageTotals | undefined;
  /** Told of every MCP call the kernel's code makes (a conversation draws its rows from them). */
  private readonly mcpObservers = new Set<McpCallObserver>();
  /** The one way to skill files, with the plan's guard (sandbox or remote) bound in from the start. */
  private readonly access: SkillAccess;
  private readonly watchers: Disposable[] = [];
  private closed: Promise<void> | undefined;
  /** The MCP step of each reload, one at a time: two reloads must not both start a session's first servers. */
  private mcpReloads: Promise<unknown> = Promise.resolve();
  /** The session's MCP servers; undefined while none is configured (M-4: absent, not empty). A reload may start the first. */
  private mcp: SessionMcp | undefined;
  /** The images shown by this session's cells and turns (I-3): kept once by content, under the session's quota, for as long as receipts. */
  readonly images: ImageStore;

  private constructor(
    readonly id: string,
    readonly runDir: string,
    private readonly options: SessionOptions,
    private readonly rpc: RpcServer,
    view: SessionView,
    parses: ParseCache,
    private readonly plan: KernelPlan,
    mcp: SessionMcp | undefined,
  ) {
    this.mcp = mcp;
    this.access = new SkillAccess(guardOf(plan), this.activationObservers);
    this.images = new ImageStore(options.stateDir, { retentionMs: RECEIPT_TTL_MS });
    this.views = new ViewKeeper(options, view, (next) => {
      const routes = this.routesFor(next);
      return () => this.rpc.swapRoutes(routes);
    }, parses);
  }

  private routesFor(view: SessionView) {
    return buildRoutes(view, this, this.access, this.mcp ? { servers: this.mcp, observers: this.mcpObservers } : undefined);
  }

  /** Opens a session: discovers the catalog, plans its kernel, starts the RPC channel, boots the kernel. Cleans up on failure. */
  static async open(options: SessionOptions): Promise<Session> {
    const id = randomBytes(SESSION_ID_BYTES).toString("hex");
    await sweepRunDirs(options.stateDir);
    const runDir = await makeRunDir(options.stateDir);
    let plan: KernelPlan | undefined;
    let mcp: SessionMcp | undefined;
    let session: Session | undefined;
    try {
      const extensions: ExtensionState = { skills: options.extensions?.skills ?? true };
      const parses = new ParseCache();
      const view = await prepareView(options, extensions, options.sessionSettings ?? {}, parses);
      // The servers start now and come up while the kernel is planned and boots.
      mcp = await SessionMcp.open(mcpOptionsOf(options, runDir), view);
      plan = await planKernel(options, view, runDir, options.install ?? installDir(), (message: string) => (options.log ?? defaultLog)("warn", message));
      const rpc = new RpcServer({ runDir, privateSocket: await privateSocketFor(options.stateDir, runDir), logger: rpcLogger(options.log) });
      session = new Session(id, runDir, options, rpc, view, parses, plan, mcp);
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
      }
      throw error;
    }
  }

  /** The current view; a caller that holds it keeps reading one consistent catalog. */
  get view(): SessionView {
    return this.views.view;
  }

  /** The workspace as discovery resolved it. */
  get workspace(): string {
    return this.view.discovered.workspace;
  }

  /** The state dir the session keeps its run dir in. */
  get stateDir(): string {
    return this.options.stateDir;
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
    const plan = this.plan;
    if (plan.kind === "external") return;
    if (plan.kind === "remote") return this.bootRemote(plan.remote, install);
    const { sandbox, launch } = plan;
    this.options.onProgress?.(`starting kernel: ${launch.source}${sandbox.kind === "bwrap" ? " (sandboxed)" : ""}`);
    const pythonPath = [join(install, "kernel"), this.options.env.PYTHONPATH].filter(Boolean).join(":");
    // The session kernel binds its main loop's socket at every start; the ROUTER keeps dialling it.
    this.rpc.dialKernel();
    const kernel = await startKernel({
      spec: launch,
      runDir: this.runDir,
      cwd: this.options.workspace,
      extraArgv: SESSION_KERNEL_ARGV,
      // Read at each (re)start: a restart after a reload that added MCP servers gets `mcp` and their typed methods.
      extraEnv: () => ({
        ...bridgeEnv(this.bridge()),
        PYTHONPATH: pythonPath,
      }),
      // Model-written code must not find the model's key (it would print it into the transcript), nor a server's secrets.
      withoutEnv: () => [...secretEnvNames(this.view.selection.scopes.global ?? {}), ...mcpSecretEnvNames(this.view.selection.scopes)],
      ...(sandbox.wrap ? { wrap: sandbox.wrap } : {}),
      ...(this.options.log ? { log: this.options.log } : {}),
      ...(this.options.relayKey !== undefined ? { key: this.options.relayKey } : {}),
    });
    this.watch(kernel);
    this.localKernel = kernel;
    // A relayed kernel's death is the notebook's to see: its launcher exits and Jupyter restarts it.
    if (this.options.relayKey === undefined) this.watchers.push(superviseKernel(kernel, new RestartPolicy(), this.options.log ? { log: this.options.log } : {}));
  }

  /**
   * Where a notebook's relay reaches this session's kernel (K-14): each channel's address and the
   * process to watch. Undefined unless the session was opened for a relay and its kernel runs.
   */
  relayTarget(): { readonly addresses: Readonly<Record<ChannelName, string>>; readonly pid: number } | undefined {
    const info = this.options.relayKey === undefined ? undefined : this.localKernel?.connection;
    const pid = this.localKernel?.pid;
    if (info === undefined || pid === undefined) return undefined;
    return { addresses: Object.fromEntries(CHANNELS.map((channel) => [channel, channelAddress(info, channel)])) as Record<ChannelName, string>, pid };
  }

  /** A kernel on a Jupyter Server (K-12). Its server restarts it when it dies; the client boots it again. */
  private async bootRemote(remote: RemoteKernelOptions, install: string): Promise<void> {
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

  /**
   * Resolves a command for a caller against the current view, ready to run: the one resolver
   * behind `invoke`, the events route and the console (see resolveCall). Undefined for an unknown
   * command; throws AppError forbidden, invalid_params or limit_exceeded.
   */
  prepare(name: string, input: unknown, caller: Caller = "user"): PreparedCommand | undefined {
    return prepareCommand(commandContext(this.view, this, this.access), name, input, caller);
  }

  /** Runs a command for a caller against the current view; rejects with AppError not_found for an unknown one. */
  invoke(name: string, input: unknown, caller: Caller = "user"): Promise<unknown> {
    return invokeCommand(commandContext(this.view, this, this.access), name, input, caller);
  }

  /** A skill's activation through the session's guarded access (C-5); throws AppError not_found for a skill outside the catalog. */
  activate(skill: string, text: string): Promise<Activation> {
    return this.access.activate(this.skillEntry(skill), text);
  }

  /** A skill's resource listing through the same access. */
  resources(skill: string): Promise<ResourceListing> {
    return this.access.resources(this.skillEntry(skill));
  }

  /** One page of a skill's resource, pinned, through the same access. */
  async readResource(skill: string, path: string, offset: number, limit: number): Promise<ReadResult> {
    return await this.access.read(this.skillEntry(skill), path, offset, limit);
  }

  /** Calls `observer` for each activation the kernel's code makes over RPC, until disposed; it may answer in its place. */
  observeActivations(observer: ActivationObserver): Disposable {
    this.activationObservers.add(observer);
    return { dispose: () => this.activationObservers.delete(observer) };
  }

  private skillEntry(skill: string): SkillEntry {
    return requireSkill(this.view, skill);
  }

  /**
   * Re-runs discovery and swaps view and routes in one step (K-7), on the session's one chain;
   * then restarts the MCP servers whose entry changed, or starts the first ones configured since
   * the open (M-2). Answers what changed in both.
   */
  async reload(): Promise<ReloadResult> {
    const catalog = await this.views.reload();
    const step = this.mcpReloads.then(() => this.reloadMcp());
    this.mcpReloads = step.catch(() => undefined);
    return { ...catalog, mcp: await step };
  }

  /**
   * The servers of the current view: a reload of the ones running, or the session's first ones
   * with their `mcp.*` routes. Either way the kernel hears of servers it has no object for (see
   * MCP_RELOADED_NOTIFICATION).
   */
  private async reloadMcp(): Promise<McpReloadChange> {
    if (this.mcp !== undefined) {
      const change = await this.mcp.reload(this.view);
      if (change.added.length > 0) this.announceMcp(this.mcp);
      return change;
    }
    if (this.closed !== undefined || !configuresMcp(this.view)) return NO_MCP_CHANGE;
    const mcp = await SessionMcp.open(mcpOptionsOf(this.options, this.runDir), this.view);
    if (mcp === undefined) return NO_MCP_CHANGE;
    await mcp.whenSettled();
    if (this.closed !== undefined) {
      await mcp.close();
      return NO_MCP_CHANGE;
    }
    this.mcp = mcp;
    this.rpc.swapRoutes(this.routesFor(this.view));
    this.announceMcp(mcp);
    return { ...NO_MCP_CHANGE, added: mcp.names() };
  }

  /** Tells the kernel which servers the session has now, and the deadline `mcp.call` may need. */
  private announceMcp(mcp: SessionMcp): void {
    this.rpc.notify(MCP_RELOADED_NOTIFICATION, { servers: mcp.names(), deadline_ms: this.rpc.kernelAccess().deadlineMs });
  }

  /** The session's MCP servers as `mcp.servers()` lists them; empty when none is configured. */
  mcpServers(): readonly McpServerStatus[] {
    return this.mcp?.hub.servers() ?? [];
  }

  /** The MCP servers as a turn reaches them (message[0]'s block, tool mode's function tools); undefined when none is configured. */
  mcpForTurns() {
    return this.mcp && mcpTurnFace(this.mcp, this.mcpObservers);
  }

  /**
   * Rereads the settings files, each once (D-2); only when they changed does it rebuild the view
   * from the same discovery and walk the files once, so that `needsReload` is current. Throws
   * SettingsFileError for a malformed file.
   */
  refresh(): Promise<void> {
    return this.views.refresh();
  }

  /**
   * For the management catalog (D-3): rereads the settings once and walks the files once; `change`
   * may then set new session-scope settings, applied from those same reads. Never reloads. Throws
   * SettingsFileError, or what `change` throws (nothing is applied then).
   */
  walkCatalog(change?: SelectionChange): Promise<CatalogWalk> {
    return this.views.walkCatalog(change);
  }

  /** Whether the files, when last walked, differ from what the current view was discovered from; cleared by a reload from any face. */
  get needsReload(): boolean {
    return this.views.needsReload;
  }

  /** Calls `listener` after every swap of the view (a reload or a selection change, from any face). */
  onViewChange(listener: (view: SessionView) => void): Disposable {
    return this.views.onChange(listener);
  }

  /** The RPC methods of the route table being served (K-5). */
  methods(): string[] {
    return this.rpc.routes.methods();
  }

  /** The kernel's egress (its proxy, policy and records): a sandboxed kernel's whose network is not `true`; undefined otherwise. */
  get egress(): SessionEgress | undefined {
    return this.plan.kind === "local" ? this.plan.egress : undefined;
  }

  /** What the kernel may reach and what it did (N-1, N-4), for the session resource, `doctor`-like lines and the network route. */
  networkState(): NetworkState {
    const global: NetworkSetting = this.view.selection.scopes.global?.network ?? false;
    const note = projectNetworkNote({ workspace: this.options.workspace, stateDir: this.options.stateDir, view: this.view });
    const diagnostics = note === undefined ? [] : [note];
    const egress = this.egress;
    if (egress !== undefined) {
      const setting = egress.setting();
      const policy = compilePolicy(setting);
      return { mode: policy.mode, text: egress.describe(), hosts: policy.entries, from: egress.overridden ? "session" : "global", setting, counts: egress.totals(), diagnostics };
    }
    const counts = { allowed: 0, denied: 0, failed: 0, bytes: 0, dropped: 0 };
    const sandboxed = this.sandbox?.kind === "bwrap";
    if (sandboxed || global === true) return { mode: global === true ? "open" : "off", text: describeNetwork(global), hosts: 0, from: "global", setting: global, counts, diagnostics };
    const where = this.plan.kind === "remote" ? "on its Jupyter Server" : this.plan.kind === "external" ? "outside albedo" : "unsandboxed";
    const text = `unenforced (the kernel runs ${where}, with that host's network)`;
    return { mode: "unenforced", text, hosts: 0, from: "global", setting: global, counts, diagnostics };
  }

  private get sandbox(): Sandbox | undefined {
    return this.plan.kind === "local" ? this.plan.sandbox : undefined;
  }

  /** What the kernel's sandbox and launch depend on (see sandboxInputsKey); equal keys mean an equal kernel. */
  sandboxKey(): string {
    const where = { ...this.options, install: this.options.install ?? installDir(), runDir: this.runDir };
    return sandboxInputsKey(where, this.view, this.sandbox?.kind === "bwrap");
  }

  /** What a kernel needs to reach this session (K-4): the RPC endpoint, token and bounds, and the extensions. */
  bridge(): KernelBridge {
    return { ...this.rpc.kernelAccess(), extensions: ["python", ...(this.view.extensions.skills ? ["skills" as const] : []), ...(this.mcp ? ["mcp" as const] : [])] };
  }

  status(): {
    id: string; kernel: KernelStatus | "none" | "external"; pid: number | undefined; sandbox: string; sandboxNotes: readonly string[];
    revision: string; skills: number; extensions: ExtensionState; usage: UsageTotals | null;
  } {
    const sandbox = this.sandbox;
    return {
      id: this.id,
      sandbox: sandbox?.kind ?? "none",
      // Paths the sandbox would not expose (e.g. a workspace skill root linked outside the workspace): served over RPC only.
      sandboxNotes: sandbox?.kind === "bwrap" ? sandbox.notes.map((note) => `${note.path}: ${note.message}`) : [],
      kernel: this.options.kernel === "external" ? "external" : (this.kernelValue?.status ?? "none"),
      pid: this.kernelValue?.pid,
      revision: this.view.snapshot.revision,
      skills: this.view.snapshot.skills.length,
      extensions: this.view.extensions,
      usage: this.usageTotals ?? null,
    };
  }

  /** Adds a finished turn's usage to the session's (what `/status` shows). */
  recordUsage(usage: UsageTotals): void {
    this.usageTotals = this.usageTotals === undefined ? usage : sumUsage(this.usageTotals, usage);
  }

  /** What `/model` shows (O-7): the model the settings name for this session's turns, never its key. */
  modelInfo(): Record<string, unknown> {
    return describeModelSettings(this.view.selection.scopes, globalSettingsTarget(this.options.stateDir).file);
  }

  /** Shuts the kernel down (ladder), closes the RPC socket, removes the run dir. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private async closeNow(): Promise<void> {
    for (const watcher of this.watchers.splice(0)) watcher.dispose();
    try {
      await Promise.all([this.kernelValue?.shutdown(), this.mcp?.close()]);
    } finally {
      await this.rpc.close();
      await disposePlan(this.plan);
      await rm(this.runDir, { recursive: true, force: true });
    }
  }
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
