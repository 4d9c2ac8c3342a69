/**
 * Interfaces of the kernel domain: what a caller passes to start a kernel and what it observes.
 * The implementation lives in client.ts (the state machine) and the files it composes.
 */
import type { KernelMessage } from "@jupyterlab/services";
import type { Disposable, Log } from "../platform/index.js";
import type { ExecuteFuture } from "./future.js";

/** How to start one kernel; produced from a kernelspec or a configured Python interpreter. */
export interface KernelLaunchSpec {
  /** Command line; contains the literal `{connection_file}` placeholder, as kernelspec argv does. */
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly interruptMode: "signal" | "message";
  readonly displayName?: string;
}

export type KernelTransport = "ipc" | "tcp";

/** What a wrapper is given: the kernel's command line before it is wrapped. */
export interface KernelLaunch {
  /** The command line, `{connection_file}` placeholder still in it. */
  readonly argv: readonly string[];
  /** The environment the process would get unwrapped; a sandbox picks from it what the kernel may see. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The connection file's JSON text (it holds the kernel's signing key). */
  readonly connection: string;
  /** The working directory the kernel starts in; a sandbox's workspace when absent. */
  readonly cwd?: string;
}

/** The process a wrapped launch becomes. */
export interface WrappedLaunch {
  /** The final command line. */
  readonly argv: readonly string[];
  /** Open descriptors the child inherits as fds 3, 4, … in this order (bwrap binds pinned directories from them). */
  readonly fds: readonly number[];
  /** Text the child reads from a pipe at fd `3 + fds.length`, closed once written. */
  readonly feed?: string;
  /**
   * The whole environment the final command starts with, in place of the launch's. A sandbox sets
   * it: what its first process starts with stays readable in the sandbox's /proc for its life.
   */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Rewrites a kernel launch just before spawn. The wrapper delivers the connection file itself
 * (the sandbox copies it into the kernel's private /run), so the runtime writes none to disk.
 */
export type KernelWrap = (launch: KernelLaunch) => WrappedLaunch;

export interface StartKernelOptions {
  readonly spec: KernelLaunchSpec;
  /** Directory for the connection file and IPC sockets; created with mode 0700 when absent. */
  readonly runDir: string;
  /** Working directory of the kernel process (the workspace, or a notebook's directory inside it). */
  readonly cwd: string;
  /** Appended to the spec's argv, e.g. ["--ext", "albedo"]. */
  readonly extraArgv?: readonly string[];
  /** Merged over the process environment and the spec's env. A function is asked at each start, so a restart gets what holds then. */
  readonly extraEnv?: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>);
  /** Variables removed from what the kernel inherits (secrets such as the model's API key); a function is asked at each start. */
  readonly withoutEnv?: readonly string[] | (() => readonly string[]);
  /** Default "ipc"; "tcp" binds 127.0.0.1 on free ports. */
  readonly transport?: KernelTransport;
  /** The HMAC key every message is signed with; a fresh random one at each boot when absent (a notebook's relay gives its own, K-14). */
  readonly key?: string;
  /** Rewrites the final argv just before spawn (the sandbox prefixes bwrap here). */
  readonly wrap?: KernelWrap;
  /** Logger hook; the kernel domain never writes to the console itself. */
  readonly log?: Log;
}

/**
 * Client lifecycle. `ready` is entered once per boot (kernel_info reply and iopub welcome both
 * seen); `busy`/`idle` then follow the kernel's iopub status; `dead` means the process exited or
 * its heartbeat stopped without being asked to; `stopped` is final.
 */
export type KernelStatus = "starting" | "ready" | "busy" | "idle" | "restarting" | "dead" | "stopped";

export interface StatusEvent {
  readonly status: KernelStatus;
  /** Why the kernel is dead or restarting, in words. */
  readonly reason?: string;
}

/** The iopub messages that make up an execution's output. */
export type ExecuteOutput =
  | KernelMessage.IStreamMsg
  | KernelMessage.IDisplayDataMsg
  | KernelMessage.IUpdateDisplayDataMsg
  | KernelMessage.IExecuteResultMsg
  | KernelMessage.IErrorMsg
  | KernelMessage.IClearOutputMsg;

export type ExecuteReply = KernelMessage.IExecuteReplyMsg["content"];
export type KernelInfo = KernelMessage.IInfoReply;
export type CompleteReply = KernelMessage.ICompleteReplyMsg["content"];

/** Answers an `input_request` (Python's input()/getpass()). */
export type InputHandler = (prompt: string, password: boolean) => Promise<string>;

export interface ExecuteOptions {
  readonly silent?: boolean;
  readonly storeHistory?: boolean;
  /** Defaults to whether `onInput` is given. */
  readonly allowStdin?: boolean;
  readonly onInput?: InputHandler;
  readonly userExpressions?: Readonly<Record<string, string>>;
}

/** What interrupt observers learn: the execution running when the interrupt was sent. */
export interface InterruptEvent {
  readonly msgId?: string;
}

/**
 * The kernel a session holds, whoever runs it: a local process (`KernelClient`) or a kernel on a
 * Jupyter Server (`RemoteKernelClient`, K-12). Sessions, routes, console, exec and the daemon use
 * only this surface, so they do not care which.
 */
export interface Kernel {
  /** "local" or "remote"; for status reports only, never for branching behaviour. */
  readonly kind: "local" | "remote";
  readonly status: KernelStatus;
  /** The kernel process id, when it runs on this machine. */
  readonly pid: number | undefined;
  /** The kernel_info_reply of the current boot; undefined while none is ready. */
  readonly info: KernelInfo | undefined;
  onStatus(listener: (event: StatusEvent) => void): Disposable;
  onIOPub(listener: (message: KernelMessage.IIOPubMessage) => void): Disposable;
  onInterrupt(listener: (event: InterruptEvent) => void): Disposable;
  currentExecution(): { readonly msgId: string } | undefined;
  execute(code: string, options?: ExecuteOptions): ExecuteFuture;
  kernelInfo(): Promise<KernelInfo>;
  complete(code: string, cursorPos: number): Promise<CompleteReply>;
  interrupt(): Promise<void>;
  restart(reason?: string): Promise<void>;
  shutdown(): Promise<void>;
}

