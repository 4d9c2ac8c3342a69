/**
 * What the HTTP routes need from the daemon's sessions, and nothing more. `SessionRegistry`
 * (with `LiveSession`) implements it for real; route tests pass a fake with no kernel behind it.
 */
import type { KernelBridge } from "../bridge/index.js";
import type { Disposable, ExecuteOutput, ExecuteReply } from "../kernel/index.js";
import type { ExtensionState, ReloadResult, SessionView } from "../session/index.js";
import type { Settings } from "../settings/index.js";
import type { StreamEvent } from "./live.js";
import type { SpareStatus } from "./pool.js";

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
}

/** The part of a Session the routes use. */
export interface SessionFace {
  readonly id: string;
  readonly view: SessionView;
  status(): SessionStatus;
  /** The RPC methods the current view serves (K-5). */
  methods(): string[];
  bridge(): KernelBridge;
  execute(code: string): RunningExecution;
  interrupt(): Promise<void>;
  reload(): Promise<ReloadResult>;
  invoke(name: string, input: unknown, caller: "user" | "model"): Promise<unknown>;
  updateSelection(sessionSettings?: Settings): Promise<SessionView>;
}

/** A session as the daemon holds it: the session, its stream listeners, what the last walk of its files found. */
export interface HostedSession {
  readonly id: string;
  readonly workspace: string;
  /** Whether the session's kernel came from the pool of spares (K-11). */
  readonly warm: boolean;
  readonly needsReload: boolean;
  readonly session: SessionFace;
  readonly subscribers: number;
  /** Rereads the settings files and, only when they changed, rebuilds the view and walks the files (D-2). */
  refreshSelection(): Promise<void>;
  /** Records the discovered revision a walk made elsewhere found. */
  recordWalk(discoveredRevision: string): void;
  /** Runs `task` after every earlier serialized task of this session. */
  serialize<T>(task: () => Promise<T>): Promise<T>;
  publish(event: StreamEvent): void;
  publishStatus(kernel: string, reason?: string): void;
  subscribe(listener: (event: StreamEvent) => void): Disposable;
  onClosed(hook: () => void): Disposable;
}

/** The daemon's sessions as the routes see them. */
export interface SessionDirectory {
  /** Opens a session; with `externalPid` a notebook's running kernel joins it (K-13). Throws 429 too_many_sessions at the bound. */
  open(workspace: string, extensions: Partial<ExtensionState>, externalPid?: number): Promise<HostedSession>;
  /** The session with this id. Throws 404 session_not_found. */
  get(id: string): HostedSession;
  list(): readonly HostedSession[];
  /** Closes one session. Throws 404 session_not_found. */
  close(id: string): Promise<void>;
  /** The pool's spare kernels, for GET /health. */
  spares(): readonly SpareStatus[];
  /** Closes every session (the daemon's shutdown); refuses new ones from then on. */
  closeAll(): Promise<void>;
}
