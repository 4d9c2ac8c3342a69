import type { KernelBridge } from "../bridge/index.js";
import type { ExecuteFuture, ExecuteOptions, KernelStatus } from "../kernel/index.js";
import type { ImageStore } from "../images/index.js";
import type { UsageTotals } from "../model/index.js";
import type { Disposable } from "../platform/index.js";
import type { Activation, FullDiscovery, ReadResult, ResourceListing } from "../skills/index.js";
import type { Settings } from "../settings/index.js";
import type { Caller, CommandDeclaration } from "../commands/index.js";
import type { McpServerStatus } from "../mcp/index.js";
import type { McpTurnFace } from "./mcpMethods.js";
import type { RestoreReport } from "./checkpoints.js";
import type { SessionEgress } from "../network/index.js";
import type { NetworkState } from "./network.js";
import type { ActivationObserver } from "./skillAccess.js";
import type { ExtensionState, ReloadResult, SessionView } from "./view.js";

/**
 * The session as its callers hold it: a few identities, and one member per thing it keeps — its
 * kernel, its catalog, the way to its skills, its commands, its MCP servers, its images and the
 * model's usage. A caller asks for the member it needs (`session.skills.activate(…)`), and what a
 * caller needs is a `Pick<>` of this port (the turn loop's host, the MCP server's, the daemon's).
 */
export interface SessionPort {
  readonly id: string;
  /** The workspace as discovery resolved it. */
  readonly workspace: string;
  /** The runtime's state dir: never read by a tool, even when the workspace contains it. */
  readonly stateDir: string;
  /** The current view (catalog snapshot + commands); a caller that holds it reads one consistent catalog. */
  readonly view: SessionView;
  readonly kernel: SessionKernel;
  readonly catalog: SessionCatalog;
  readonly skills: SessionSkills;
  readonly commands: SessionCommands;
  readonly mcp: SessionMcpServers;
  /** The images its cells and turns showed, kept once by content for people (I-3). */
  readonly images: ImageStore;
  readonly usage: SessionUsage;
  readonly restores: SessionRestores;
  readonly network: SessionNetwork;
  /**
   * Restarts the session's kernel (K-15): empty, or with `restore` loading the checkpoint before the
   * first cell; answers the restore's report. Throws AppError conflict for a notebook's, remote or
   * external kernel, and for a restore without checkpoints.
   */
  restart(restore: boolean): Promise<RestoreReport | undefined>;
  /** `/reload session` (K-7): the catalog and the routes swapped in one step, then the MCP servers. */
  reload(): Promise<ReloadResult>;
  status(): SessionStatusReport;
  /** What a kernel needs to reach this session (K-4): the RPC endpoint, token and bounds, and the extensions. */
  bridge(): KernelBridge;
  /** The RPC methods of the route table being served (K-5). */
  methods(): string[];
}

/** The kernel as a session's callers run code in it. Throws AppError conflict for a notebook's kernel, kernel_died when there is none. */
export interface SessionKernel {
  execute(code: string, options?: ExecuteOptions): ExecuteFuture;
  /** Interrupts the running cell; its pending RPC calls fail with `cancelled`. */
  interrupt(): Promise<void>;
}

/** One walk of the files (D-3), and the view current after it. */
export interface CatalogWalk {
  readonly walk: FullDiscovery;
  readonly view: SessionView;
}

/** Given the walk and the current view, the session-scope settings to apply, or undefined to keep them. */
export type SelectionChange = (walk: FullDiscovery, view: SessionView) => Settings | undefined;

/** The session's catalog work, on its one chain (D-2, D-3). */
export interface SessionCatalog {
  /** Whether the files, when last walked, differ from what the current view was discovered from; cleared by a reload. */
  readonly needsReload: boolean;
  /** Rereads the settings files, each once; only when they changed, rebuilds the view and walks the files once. */
  refresh(): Promise<void>;
  /** Rereads the settings once and walks the files once; `change` may set new session-scope settings from those reads. Never reloads. */
  walk(change?: SelectionChange): Promise<CatalogWalk>;
  /** Calls `listener` after every swap of the view (a reload or a selection change, from any face). */
  onChange(listener: (view: SessionView) => void): Disposable;
}

/** The session's one guarded way to its skills' files (C-5, R-1, R-2); each throws AppError not_found for a skill outside the catalog. */
export interface SessionSkills {
  activate(skill: string, text: string): Promise<Activation>;
  resources(skill: string): Promise<ResourceListing>;
  /** One page of a skill's resource, pinned. */
  read(skill: string, path: string, offset: number, limit: number): Promise<ReadResult>;
  /** Calls `observer` for each activation the kernel's code makes over RPC, until disposed; it may answer in its place. */
  observe(observer: ActivationObserver): Disposable;
}

/** A command resolved against one view, its arguments checked and its context bound: `run` does it. */
export interface PreparedCommand {
  readonly command: CommandDeclaration;
  run(): Promise<unknown>;
}

/** The session's commands against its current view. */
export interface SessionCommands {
  /** Resolves a command for a caller, ready to run; undefined for an unknown one; throws AppError forbidden, invalid_params or limit_exceeded. */
  prepare(name: string, input: unknown, caller?: Caller): PreparedCommand | undefined;
  /** Runs a command for a caller; rejects with AppError not_found for an unknown one. */
  invoke(name: string, input: unknown, caller?: Caller): Promise<unknown>;
  /** The error for a slash name the current view has no command for: an unknown name, or a skill switched off (saying where). */
  notFound(name: string): Error;
}

/** The session's MCP servers (M-2..M-4); absent, not empty, while none is configured. */
export interface SessionMcpServers {
  /** As `mcp.servers()` lists them; empty when none is configured. */
  servers(): readonly McpServerStatus[];
  /** As a turn reaches them, with every MCP call observed; undefined when none is configured (no block, no words, no tools). */
  forTurns(): McpTurnFace | undefined;
}

/** What the session's turns used of the model (O-10), and which model its settings name (O-7). */
export interface SessionUsage {
  /** The tokens summed over finished turns; undefined until an endpoint reported any. */
  readonly totals: UsageTotals | undefined;
  record(usage: UsageTotals): void;
  /** What `/model` shows: the model the settings name for this session's turns, never its key. */
  model(): Record<string, unknown>;
}

/** What the kernel may reach (N-1) and what it did (N-4). */
export interface SessionNetwork {
  /** The kernel's egress proxy, policy and records; undefined when its kernel has none (not sandboxed, or `network: true`). */
  readonly egress: SessionEgress | undefined;
  /** What the kernel may reach, in one summary, with the counts of what it did. */
  state(): NetworkState;
}

/** The kernel's restores from its checkpoint (K-15). */
export interface SessionRestores {
  /** Whether the kernel checkpoints its namespace after each cell. */
  readonly enabled: boolean;
  /** The last restore's report, if the kernel ever restored. */
  readonly last: RestoreReport | undefined;
  /** Calls `observer` with each restore's report (a supervisor restart, a restart with restore, a resume), until disposed. */
  observe(observer: (report: RestoreReport) => void): Disposable;
  /** The last restore's line, once: what a conversation tells its model; then undefined until the next restore. */
  takeNotice(): string | undefined;
  /** Resolves at once unless the kernel died and its restart is under way: then once that restart reported its restore, or at RESTORE_SETTLE_MS. */
  settled(): Promise<void>;
}

/** What `/status` and the session resource report. */
export interface SessionStatusReport {
  readonly id: string;
  readonly kernel: KernelStatus | "none" | "external";
  readonly pid: number | undefined;
  readonly sandbox: string;
  readonly sandboxNotes: readonly string[];
  readonly revision: string;
  readonly skills: number;
  readonly extensions: ExtensionState;
  readonly usage: UsageTotals | null;
  /** Whether the kernel checkpoints its namespace (K-15), and its last restore. */
  readonly checkpoints: boolean;
  readonly restore: RestoreReport | null;
}
