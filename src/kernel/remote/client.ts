/**
 * RemoteKernelClient: one kernel on a Jupyter Server or Enterprise Gateway for one session (K-12),
 * behind the same `Kernel` interface as a local one. Started with `KernelAPI.startNew` (never
 * KernelManager: Enterprise Gateway answers 403 to `GET /api/kernels`) and driven over one
 * `KernelConnection` whose client id stays the same for the session's life, so a dropped WebSocket
 * reconnects to the same server-side session and gets the iopub messages buffered meanwhile.
 */
import { randomUUID } from "node:crypto";
import type { Kernel as Services, KernelMessage } from "@jupyterlab/services";
import { isAlive, KernelBase } from "../base.js";
import { kernelDiedError, kernelStoppedError } from "../errors.js";
import { ExecuteFuture } from "../future.js";
import type { CompleteReply, ExecuteOptions, Kernel, KernelInfo } from "../kernel.js";
import { executeRequest } from "../messages.js";
import { captureServicesConsole } from "./consoleNoise.js";
import { redactingLog } from "./quote.js";
import { remoteErrorOf, RemoteKernelError } from "./errors.js";
import {
  REMOTE_READY_TIMEOUT_MS, REMOTE_REQUEST_TIMEOUT_MS, REMOTE_RESTART_TIMEOUT_MS, REMOTE_SHUTDOWN_TIMEOUT_MS,
} from "./limits.js";
import { serverSettings } from "./server.js";
import type { RemoteKernelOptions } from "./settings.js";
import { withDeadline } from "./deadline.js";
import { connectedInfo } from "./ready.js";
import type { RemoteKernelConnection } from "./connection.js";
import { jupyterServices } from "../packages.js";
import type { Log } from "../../platform/index.js";

export interface RemoteKernelStartOptions {
  readonly remote: RemoteKernelOptions;
  readonly log?: Log;
  /**
   * Runs after every boot (start, restart, a restart the server made by itself) before the kernel
   * counts as ready; the session bootstraps its kernel package here. A throw fails the boot.
   */
  readonly onBoot?: (kernel: RemoteKernelClient) => Promise<void>;
}

/** Starts a kernel on the server and resolves once it is ready and booted; throws RemoteKernelError. */
export async function startRemoteKernel(options: RemoteKernelStartOptions): Promise<RemoteKernelClient> {
  const client = new RemoteKernelClient(options);
  try {
    await client.start();
  } catch (error) {
    await client.shutdown();
    throw error;
  }
  return client;
}

export class RemoteKernelClient extends KernelBase implements Kernel {
  readonly kind = "remote";
  /** The WebSocket session id: one per albedo session, kept across reconnects and restarts. */
  readonly sessionId = randomUUID();
  readonly pid = undefined;
  private connectionValue: RemoteKernelConnection | undefined;
  private infoValue: KernelInfo | undefined;
  private lifecycle: Promise<void> = Promise.resolve();
  private stopped: Promise<void> | undefined;
  /** Why the kernel last died; later executions fail with it. */
  private deathReason: string | undefined;
  /** Set once the server sent what albedo cannot read: a boot under way fails with it. */
  private refusal: string | undefined;
  private readonly releaseConsole: () => void;
  /** The session's log with the token redacted: kernel ids, names and services' chatter come from the server. */
  protected readonly log: Log;

  constructor(private readonly options: RemoteKernelStartOptions) {
    super();
    this.log = redactingLog(options.log ?? (() => undefined), [options.remote.token]);
    this.releaseConsole = captureServicesConsole(this.log);
  }

  get info(): KernelInfo | undefined {
    return this.infoValue;
  }

  /** The server's id for the kernel, once started. */
  get id(): string | undefined {
    return this.connectionValue?.id;
  }

  /** The server's base URL. */
  get url(): string {
    return this.options.remote.url;
  }

  /** The live connection; throws when the kernel is stopped or dead. The comm channel is opened on it. */
  get connection(): RemoteKernelConnection {
    if (this.connectionValue === undefined || this.connectionValue.isDisposed) throw kernelDiedError("the remote kernel has no connection");
    return this.connectionValue;
  }

  /** Starts the kernel on the server, connects, boots; throws RemoteKernelError. Called by startRemoteKernel. */
  start(): Promise<void> {
    return this.enqueue(async () => {
      await this.connect();
      await this.boot();
    });
  }

  /** Queues `code` behind earlier executions; the future fails if the kernel dies, restarts or stops first. */
  execute(code: string, options: ExecuteOptions = {}): ExecuteFuture {
    const future = this.makeFuture(code, options);
    if (this.stopped) future.fail(kernelStoppedError("shut down"));
    else if (this.statusValue === "dead") future.fail(kernelDiedError(this.deathReason ?? "the remote kernel is dead and was not restarted"));
    else {
      this.queue.push(future);
      this.pump();
    }
    return future;
  }

  /**
   * Sends `code` at once, ahead of the queue: only for the boot hook, which runs before the kernel
   * counts as ready (queued executions wait for ready).
   */
  executeDuringBoot(code: string, options: ExecuteOptions = {}): ExecuteFuture {
    const future = this.makeFuture(code, options);
    this.send(future);
    return future;
  }

  /** The kernel's kernel_info reply; throws if the kernel restarts or stops first, or by REMOTE_REQUEST_TIMEOUT_MS. */
  async kernelInfo(): Promise<KernelInfo> {
    const reply = await withDeadline(this.connection.requestKernelInfoOrCancel(), REMOTE_REQUEST_TIMEOUT_MS, "kernel_info_request", "REMOTE_REQUEST_TIMEOUT_MS");
    if (reply === undefined) throw kernelStoppedError("shut down");
    return reply.content as KernelInfo;
  }

  async complete(code: string, cursorPos: number): Promise<CompleteReply> {
    const reply = await withDeadline(this.connection.requestComplete({ code, cursor_pos: cursorPos }), REMOTE_REQUEST_TIMEOUT_MS, "complete_request", "REMOTE_REQUEST_TIMEOUT_MS");
    return reply.content;
  }

  /** Asks the server to interrupt the kernel, then tells observers which execution it targeted. */
  async interrupt(): Promise<void> {
    const target = await this.interruptTarget();
    if (target === false) return;
    const event = { msgId: target?.msgId };
    try {
      await withDeadline(this.connection.interrupt(), REMOTE_REQUEST_TIMEOUT_MS, "interrupt", "REMOTE_REQUEST_TIMEOUT_MS")
        .catch(async (error: unknown) => { throw await this.remoteError(error, "interrupt"); });
    } finally {
      this.interruptEvents.fire(event);
    }
  }

  /** Restarts the kernel on the server (same kernel id, same connection) and boots it again; throws RemoteKernelError. */
  restart(reason = "restart requested"): Promise<void> {
    return this.enqueue(async () => {
      if (this.stopped) throw new Error("cannot restart a remote kernel that was shut down");
      this.setStatus({ status: "restarting", reason });
      this.failExecutions(kernelStoppedError("restarted"));
      const connection = this.connectionValue;
      if (connection === undefined || connection.isDisposed) await this.connect();
      else await withDeadline(connection.restart(), REMOTE_RESTART_TIMEOUT_MS, "restart", "REMOTE_RESTART_TIMEOUT_MS")
        .catch(async (error: unknown) => { throw await this.remoteError(error, "restart"); });
      await this.boot();
    });
  }

  /** Shuts the kernel down on the server and closes the connection; idempotent, never throws. */
  shutdown(): Promise<void> {
    this.stopped ??= this.enqueue(async () => {
      this.failExecutions(kernelStoppedError("shut down"));
      const connection = this.connectionValue;
      if (connection !== undefined && !connection.isDisposed) {
        await withDeadline(connection.shutdown(), REMOTE_SHUTDOWN_TIMEOUT_MS, "shutdown", "REMOTE_SHUTDOWN_TIMEOUT_MS").catch((error: unknown) => {
          this.log("warn", "remote kernel: shutdown failed; the server may keep the kernel", { kernel: connection.id, error: String(error) });
        });
        if (!connection.isDisposed) connection.dispose();
      }
      this.setStatus({ status: "stopped" });
    }).catch(() => undefined).finally(() => this.releaseConsole());
    return this.stopped;
  }

  /** Services futures not yet disposed on this connection: the comm channel disposes each of its own, so this stays small. */
  pendingServicesFutures(): number {
    const futures = (this.connectionValue as unknown as { _futures?: Map<string, unknown> } | undefined)?._futures;
    return futures?.size ?? 0;
  }

  private async connect(): Promise<void> {
    const remote = this.options.remote;
    this.refusal = undefined;
    // A WebSocket that never opened on a connection that never connected is the server (or a proxy
    // before it) refusing it: failing the boot now beats services' reconnects, which take minutes.
    let connected = false;
    const settings = serverSettings(remote, {
      onRefused: (what) => this.refuseServer(`the server sent ${what}; albedo closed the connection`),
      onHandshakeFailed: (why) => connected || this.refuseServer(`the server refused the kernel's WebSocket (${why}); albedo closed the connection`),
    });
    // services' kernel connection, and services with it, load with the first remote kernel.
    const { KernelAPI, CommsOverSubshells } = jupyterServices();
    const { RemoteKernelConnection } = await import("./connection.js");
    const body = { name: remote.kernelName, ...(Object.keys(remote.env).length > 0 ? { env: remote.env } : {}) };
    const model = await withDeadline(KernelAPI.startNew(body as Services.IKernelOptions, settings), REMOTE_REQUEST_TIMEOUT_MS, "kernel start", "REMOTE_REQUEST_TIMEOUT_MS")
      .catch(async (error: unknown) => { throw await this.remoteError(error, "kernel start"); });
    this.log("info", "remote kernel: started", { kernel: model.id, name: model.name, url: remote.url });
    const connection = new RemoteKernelConnection({
      model, serverSettings: settings, clientId: this.sessionId, username: remote.username ?? "", handleComms: true,
      // The comm channel makes its own subshell; services' per-target one would be a second.
      commsOverSubshells: CommsOverSubshells.Disabled,
    });
    this.connectionValue = connection;
    connection.statusChanged.connect((_, status) => this.onServicesStatus(connection, status));
    connection.iopubMessage.connect((_, message) => this.onIOPubMessage(message));
    connection.connectionStatusChanged.connect((_, status) => {
      if (status === "connected") connected = true;
      // services retries a dropped WebSocket a few times with back-off, then gives up with this status.
      if (status === "disconnected" && connection === this.connectionValue && !this.stopped) this.died("lost the connection to the server");
    });
  }

  private async boot(): Promise<void> {
    try {
      // Asked afresh at every boot, once the WebSocket is back: after a restart services reconnects first.
      const reply = await withDeadline(connectedInfo(this.connection), REMOTE_READY_TIMEOUT_MS, "kernel_info after a (re)start", "REMOTE_READY_TIMEOUT_MS");
      this.infoValue = (reply?.content as KernelInfo | undefined) ?? this.infoValue;
      await this.options.onBoot?.(this);
    } catch (error) {
      const failure = this.refusal !== undefined ? new RemoteKernelError("server", this.refusal) : error;
      this.setStatus({ status: "dead", reason: `boot failed: ${failure instanceof Error ? failure.message.split("\n")[0] : String(failure)}` });
      throw failure;
    }
    this.setStatus({ status: "ready" });
    this.pump();
  }

  private onServicesStatus(connection: RemoteKernelConnection, status: Services.Status): void {
    if (connection !== this.connectionValue || this.stopped) return;
    if ((status === "busy" || status === "idle") && isAlive(this.statusValue)) this.setStatus({ status });
    // A restart of ours also reaches services as the server's "restarting" notice: only a restart nobody asked for is handled here.
    else if (status === "autorestarting" && this.statusValue !== "restarting") this.onServerRestart();
    else if (status === "dead") this.died("the server reports the kernel dead");
  }

  private died(reason: string): void {
    if (this.statusValue === "dead") return;
    this.deathReason = reason;
    this.setStatus({ status: "dead", reason });
    this.failExecutions(kernelDiedError(reason));
  }

  /**
   * The server sent a frame albedo cannot read (the socket already stopped reading), or refused
   * the first WebSocket: the kernel counts as dead with the reason, the connection ends without
   * reconnecting, and the kernel is shut down on the server (a bounded REST call), so nothing of
   * it is left running on either side.
   */
  private refuseServer(reason: string): void {
    const connection = this.connectionValue;
    if (connection === undefined || connection.isDisposed || this.stopped) return;
    this.refusal = reason;
    this.log("warn", "remote kernel: refused what the server sent", { kernel: connection.id, reason });
    this.died(reason);
    connection.dispose();
    void withDeadline(jupyterServices().KernelAPI.shutdownKernel(connection.id, connection.serverSettings), REMOTE_SHUTDOWN_TIMEOUT_MS, "shutdown", "REMOTE_SHUTDOWN_TIMEOUT_MS")
      .catch(async (error: unknown) => {
        this.log("warn", "remote kernel: shutdown after a refused frame failed; the server may keep the kernel", { kernel: connection.id, error: (await this.remoteError(error, "shutdown")).message });
      });
  }

  /** The server restarted a kernel that died: pending work fails as with a local death, then the kernel boots again. */
  private onServerRestart(): void {
    const reason = "the kernel died and its server restarted it";
    this.setStatus({ status: "dead", reason });
    this.failExecutions(kernelDiedError(reason));
    void this.enqueue(async () => {
      this.setStatus({ status: "restarting", reason });
      await this.boot();
    }).catch((error: unknown) => {
      this.log("error", "remote kernel: boot after the server's restart failed", { error: String(error) });
    });
  }

  /** Iopub messages not tied to the running execution go to onIOPub listeners; comm traffic (the RPC channel) is left out. */
  private onIOPubMessage(message: KernelMessage.IIOPubMessage): void {
    const type: string = message.header.msg_type;
    if (type === "status" || type.startsWith("comm_")) return;
    const parent = (message.parent_header as { msg_id?: string } | undefined)?.msg_id;
    if (parent !== undefined && parent === this.current?.msgId) return;
    this.iopubEvents.fire(message);
  }

  private makeFuture(code: string, options: ExecuteOptions): ExecuteFuture {
    const silent = options.silent ?? false;
    const request = executeRequest(this.sessionId, {
      code, silent, store_history: options.storeHistory ?? !silent,
      allow_stdin: options.allowStdin ?? options.onInput !== undefined,
      user_expressions: { ...options.userExpressions }, stop_on_error: false,
    });
    return new ExecuteFuture(request, options);
  }

  protected canSend(): boolean {
    return isAlive(this.statusValue);
  }

  protected sendExecution(future: ExecuteFuture): void {
    this.send(future);
  }

  /** Hands the request to services; its future feeds ours (outputs, reply, idle, input requests). */
  private send(future: ExecuteFuture): void {
    let handle: Services.IShellFuture;
    try {
      handle = this.connection.sendShellMessage(future.request, true, true);
    } catch (error) {
      future.fail(kernelDiedError(`cannot send to the remote kernel: ${String(error)}`));
      return;
    }
    handle.onIOPub = (message) => void future.handleIOPub(message);
    handle.onReply = (message) => future.handleReply(message as KernelMessage.IExecuteReplyMsg);
    handle.onStdin = (message) => {
      if (message.header.msg_type === "input_request") void this.answerInput(future, message as KernelMessage.IInputRequestMsg);
    };
    handle.done.catch(() => undefined);
    void future.done.catch(() => undefined).finally(() => handle.dispose());
  }

  private async answerInput(future: ExecuteFuture, request: KernelMessage.IInputRequestMsg): Promise<void> {
    let value = "";
    try {
      if (future.options.onInput) value = await future.options.onInput(request.content.prompt, request.content.password);
    } catch (error) {
      this.log("warn", "input handler failed; answering with an empty line", { error: String(error) });
    }
    try {
      this.connection.sendInputReply({ status: "ok", value }, request.header);
    } catch {
      // the kernel went away meanwhile; its execution fails on its own
    }
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.lifecycle.then(step);
    this.lifecycle = run.catch(() => undefined);
    return run;
  }

  private remoteError(error: unknown, what: string): Promise<RemoteKernelError> {
    return remoteErrorOf(error, what, this.options.remote);
  }
}
