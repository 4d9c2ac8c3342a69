/**
 * What the HTTP routes need from the daemon's sessions, and nothing more. `SessionRegistry`
 * (with `LiveSession`) implements it for real; route tests pass a fake with no kernel behind it.
 */
import type { ImageStore } from "../images/index.js";
import type { KernelBridge } from "../bridge/index.js";
import type { ExecuteOutput, ExecuteReply, RemoteOverride } from "../kernel/index.js";
import type { Turn } from "../operations/index.js";
import type { CatalogWalk, ExtensionState, NetworkState, PreparedCommand, ReloadResult, SelectionChange, SessionView } from "../session/index.js";
import type { SessionEgress } from "../network/index.js";
import type { StoredRow } from "../turns/index.js";
import type { SpareStatus } from "./pool.js";
import type { Disposable } from "../platform/index.js";
import type { McpServerStatus } from "../mcp/index.js";
import type { UsageTotals } from "../model/index.js";
import type { SessionClient } from "../api/index.js";

/** One event on a session's stream (D-2): domain objects as they happened; views.ts makes each one's message. */
export type StreamEvent =
  | { readonly type: "output"; readonly executionId: string; readonly output: ExecuteOutput }
  | { readonly type: "status"; readonly kernel: string; readonly reason?: string; readonly revision: string }
  | { readonly type: "transcript"; readonly turn: Turn }
  | { readonly type: "row"; readonly row: StoredRow }
  | { readonly type: "text"; readonly turnId: string; readonly delta: string };

/** What the daemon does with a session's turns. */
export interface SessionTurns {
  /** Starts running the session's waiting turns, unless already at it. */
  kick(): void;
  /** Ends the running turn as interrupted (its model request and its cell); false when no turn ran. */
  interrupt(): Promise<boolean>;
  /** Interrupts the running turn and runs no more. */
  close(): Promise<void>;
}

/** For sessions that run no turns (route tests with a scripted kernel). */
export const NO_TURNS: SessionTurns = { kick: () => undefined, interrupt: async () => false, close: async () => undefined };

/** An execution in flight: outputs as they come, and its reply once it ended. */
export interface RunningExecution {
  onOutput(listener: (output: ExecuteOutput) => void): Disposable;
  readonly done: Promise<ExecuteReply>;
  /** Bytes cut from outputs that passed the kernel's per-output bound. */
  readonly cutOutputBytes: number;
}

/** What a session reports of its kernel. */
export interface SessionStatus {
  readonly kernel: string;
  readonly pid: number | undefined;
  readonly sandbox: string;
  readonly sandboxNotes: readonly string[];
  /** The tokens the session's turns used, summed; null (or absent) until an endpoint reported any. */
  readonly usage?: UsageTotals | null;
}

/** The part of a Session the routes use. The session owns its catalog work: refresh, walks, reload and `needsReload`. */
export interface SessionFace {
  readonly id: string;
  readonly workspace: string;
  readonly view: SessionView;
  /** Whether the files on disk would give another catalog than the one served (D-2), as of the last walk. */
  readonly needsReload: boolean;
  status(): SessionStatus;
  /** The RPC methods the current view serves (K-5). */
  methods(): string[];
  /** The session's MCP servers with their status and diagnostics (M-2); empty when none is configured. */
  mcpServers(): readonly McpServerStatus[];
  bridge(): KernelBridge;
  execute(code: string): RunningExecution;
  interrupt(): Promise<void>;
  reload(): Promise<ReloadResult>;
  invoke(name: string, input: unknown, caller: "user" | "model"): Promise<unknown>;
  /** Resolves a command for a caller (undefined for an unknown name); see Session.prepare. */
  prepare(name: string, input: unknown, caller: "user" | "model"): PreparedCommand | undefined;
  /** Rereads the settings files and, only when they changed, rebuilds the view and walks the files (D-2). */
  refresh(): Promise<void>;
  /** Walks the files once, applying a session-scope change in the same step (D-3). */
  walkCatalog(change?: SelectionChange): Promise<CatalogWalk>;
  /** The images its cells and turns showed, kept for people (I-3). */
  readonly images: ImageStore;
  /** Where a notebook's relay reaches the kernel (K-14); undefined for a session not opened for one. */
  relayTarget(): RelayTarget | undefined;
  /** The kernel's egress proxy, policy and records (N-1, N-4); undefined when its kernel has none. */
  readonly egress: SessionEgress | undefined;
  /** What the kernel may reach, in one summary (N-1). */
  networkState(): NetworkState;
}

/** A relayed kernel's channel addresses and the process whose end is the kernel's end (K-14). */
export interface RelayTarget {
  readonly addresses: Readonly<Record<"shell" | "iopub" | "stdin" | "control" | "hb", string>>;
  readonly pid: number;
}

/**
 * A kernel that is not the session's own to start as it likes: a notebook's running kernel that
 * joins (K-13), or the session's own kernel signing with a notebook's key for its relay (K-14).
 * Either way the session closes once `pid` (the kernel, or the launcher) is gone.
 */
export type KernelJoin =
  | { readonly kind: "external"; readonly pid: number }
  | { readonly kind: "relay"; readonly key: string; readonly pid: number };

/** How a session is opened beyond its workspace and extensions. */
export interface OpenOptions {
  /** A notebook's kernel joins it, or a notebook's relay reaches it (K-13, K-14). */
  readonly join?: KernelJoin;
  /** Its kernel runs on this Jupyter Server (K-12). */
  readonly remote?: RemoteOverride;
  /** Who opens it; "api" when unsaid. */
  readonly client?: SessionClient;
}

/** A session as the daemon holds it: the session and the stream listeners its events fan out to. */
export interface HostedSession {
  readonly id: string;
  /** Who opened it (POST /sessions `client`). */
  readonly client: SessionClient;
  /** When the daemon handed it to its client, in milliseconds since the epoch. */
  readonly openedAt: number;
  /** Whether the session's kernel came from the pool of spares (K-11). */
  readonly warm: boolean;
  readonly session: SessionFace;
  /** Runs the session's admitted turns (O-3). */
  readonly turns: SessionTurns;
  readonly subscribers: number;
  publish(event: StreamEvent): void;
  publishStatus(kernel: string, reason?: string): void;
  subscribe(listener: (event: StreamEvent) => void): Disposable;
  onClosed(hook: () => void): Disposable;
}

/** The daemon's sessions as the routes see them. */
export interface SessionDirectory {
  /** Opens a session; with `how.join` a notebook's kernel joins it or a notebook's relay reaches it (K-13, K-14). Throws 429 too_many_sessions at the bound. */
  open(workspace: string, extensions: Partial<ExtensionState>, how?: OpenOptions): Promise<HostedSession>;
  /** The session with this id. Throws 404 session_not_found. */
  get(id: string): HostedSession;
  list(): readonly HostedSession[];
  /** Sessions open or being opened (an idle daemon has none). */
  readonly active: number;
  /** Closes one session. Throws 404 session_not_found. */
  close(id: string): Promise<void>;
  /** The pool's spare kernels, for GET /health. */
  spares(): readonly SpareStatus[];
  /** Closes every session (the daemon's shutdown); refuses new ones from then on. */
  closeAll(): Promise<void>;
}
