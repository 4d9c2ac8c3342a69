/**
 * What the HTTP routes need from the daemon's sessions, and nothing more. `SessionRegistry`
 * (with `LiveSession`) implements it for real; route tests pass a fake with no kernel behind it.
 */
import type { ExecuteOutput, ExecuteReply, RemoteOverride } from "../kernel/index.js";
import type { Turn } from "../operations/index.js";
import type { ExtensionState, RelayTarget, SessionPort } from "../session/index.js";

export type { RelayTarget };
import type { StoredRow } from "../turns/index.js";
import type { DenialNotice, NetworkSetting } from "../network/index.js";
import type { SpareStatus } from "./pool.js";
import type { Disposable } from "../platform/index.js";
import type { SessionClient } from "../api/index.js";

/** One event on a session's stream (D-2): domain objects as they happened; views.ts makes each one's message. */
export type StreamEvent =
  | { readonly type: "output"; readonly executionId: string; readonly output: ExecuteOutput }
  | { readonly type: "status"; readonly kernel: string; readonly reason?: string; readonly revision: string }
  | { readonly type: "transcript"; readonly turn: Turn }
  | { readonly type: "row"; readonly row: StoredRow }
  | { readonly type: "text"; readonly turnId: string; readonly delta: string }
  | { readonly type: "network"; readonly notice: DenialNotice };

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

/**
 * The part of a Session the routes use: a view of the session's port, with its kernel as the
 * routes run cells in it (route tests script it). The session owns its catalog work: refresh,
 * walks, reload and `needsReload`.
 */
export type SessionFace = Pick<SessionPort, "id" | "workspace" | "view" | "catalog" | "commands" | "images" | "reload" | "status" | "methods" | "bridge" | "restart" | "network"> & {
  readonly restores: Pick<SessionPort["restores"], "observe">;
  readonly kernel: { execute(code: string): RunningExecution; interrupt(): Promise<void> };
  readonly mcp: Pick<SessionPort["mcp"], "servers">;
  /** Where a notebook's relay reaches the kernel (K-14); undefined for a session not opened for one. */
  relayTarget(): RelayTarget | undefined;
};

/**
 * A kernel that is not the session's own to start as it likes: a notebook's running kernel that
 * joins (K-13), or the session's own kernel signing with a notebook's key for its relay (K-14).
 * Either way the session closes once `pid` (the kernel, or the launcher) is gone.
 */
export type KernelJoin =
  | { readonly kind: "external"; readonly pid: number }
  | { readonly kind: "relay"; readonly key: string; readonly pid: number; readonly cwd?: string };

/** How a session is opened beyond its workspace and extensions. */
export interface OpenOptions {
  /** A notebook's kernel joins it, or a notebook's relay reaches it (K-13, K-14). */
  readonly join?: KernelJoin;
  /** Its kernel runs on this Jupyter Server (K-12). */
  readonly remote?: RemoteOverride;
  /** Who opens it; "api" when unsaid. */
  readonly client?: SessionClient;
  /** Start from this closed session's checkpoint (K-15). */
  readonly resume?: string;
  /** The session's own network setting, in place of the global one (N-1): its kernel boots for it, never from a spare. */
  readonly network?: NetworkSetting;
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
