/**
 * KernelClient: one kernel for one session (K-1, K-2, K-9). A state machine over successive
 * KernelInstances (a restart swaps the instance, the client stays): it queues executions in order,
 * routes replies and outputs to their futures, and fails pending work when the kernel dies.
 */
import { randomUUID } from "node:crypto";
import type { KernelMessage } from "@jupyterlab/services";
import type { SendChannel } from "./channels.js";
import type { ConnectionInfo } from "./connection.js";
import { isAlive, KernelBase } from "./base.js";
import { deadlineError, kernelDiedError, kernelStoppedError } from "./errors.js";
import { ExecuteFuture } from "./future.js";
import { KernelInstance } from "./instance.js";
import type { CompleteReply, ExecuteOptions, Kernel, KernelInfo, StartKernelOptions } from "./kernel.js";
import { completeRequest, executeRequest, inputReply, interruptRequest, kernelInfoRequest } from "./messages.js";
import { parentMsgId } from "./wire.js";
import type { Log } from "../platform/index.js";
import { INTERRUPT_REPLY_TIMEOUT_MS, SHELL_REQUEST_TIMEOUT_MS } from "./limits.js";


interface PendingRequest {
  resolve(content: unknown): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
}

/** Starts a kernel and resolves once it is ready; throws KernelStartError when it cannot get there. */
export async function startKernel(options: StartKernelOptions): Promise<KernelClient> {
  const client = new KernelClient(options);
  await client.start();
  return client;
}

export class KernelClient extends KernelBase implements Kernel {
  readonly kind = "local";
  /** Session id written into every header this client sends. */
  readonly sessionId = randomUUID();
  private instance: KernelInstance | undefined;
  private dying: Promise<void> | undefined;
  private generation = 0;
  private lifecycle: Promise<void> = Promise.resolve();
  private stopped: Promise<void> | undefined;
  private readonly requests = new Map<string, PendingRequest>();

  constructor(private readonly options: StartKernelOptions) {
    super();
  }

  /** The kernel process id, while one runs. */
  get pid(): number | undefined {
    return this.instance?.process.pid;
  }

  /** The current connection info (transport, addresses, key), while a kernel runs. */
  get connection(): ConnectionInfo | undefined {
    return this.instance?.info;
  }

  /** The current connection file path, while a kernel runs. */
  get connectionFile(): string | undefined {
    return this.instance?.connectionFile;
  }

  /** The kernel_info_reply of the current boot; undefined while none is ready. */
  get info(): KernelInfo | undefined {
    return this.instance?.kernelInfoReply;
  }

  /** Boots the first kernel; throws KernelStartError. Called by startKernel. */
  start(): Promise<void> {
    return this.enqueueLifecycle(() => this.boot());
  }

  /** Queues `code` behind earlier executions; the future fails if the kernel dies or stops first. */
  execute(code: string, options: ExecuteOptions = {}): ExecuteFuture {
    const request = executeRequest(this.sessionId, {
      code,
      silent: options.silent ?? false,
      store_history: options.storeHistory ?? !(options.silent ?? false),
      allow_stdin: options.allowStdin ?? options.onInput !== undefined,
      user_expressions: { ...options.userExpressions },
      stop_on_error: false,
    });
    const future = new ExecuteFuture(request, options);
    if (this.stopped) future.fail(kernelStoppedError("shut down"));
    else if (this.statusValue === "dead") future.fail(kernelDiedError("the kernel is dead and was not restarted"));
    else {
      this.queue.push(future);
      this.pump();
    }
    return future;
  }

  /** The kernel_info_reply content; throws AppError timeout/kernel_died/cancelled. */
  kernelInfo(): Promise<KernelInfo> {
    return this.request("shell", kernelInfoRequest(this.sessionId), SHELL_REQUEST_TIMEOUT_MS, "SHELL_REQUEST_TIMEOUT_MS");
  }

  /** Completions at `cursorPos` in `code`; throws like kernelInfo. */
  complete(code: string, cursorPos: number): Promise<CompleteReply> {
    return this.request("shell", completeRequest(this.sessionId, code, cursorPos), SHELL_REQUEST_TIMEOUT_MS, "SHELL_REQUEST_TIMEOUT_MS");
  }

  /** Interrupts the running execution per the spec's interrupt mode, once the kernel has begun it; throws when no kernel runs or the reply times out. */
  async interrupt(): Promise<void> {
    this.requireInstance();
    const target = await this.interruptTarget();
    if (target === false) return;
    const instance = this.requireInstance();
    const event = { msgId: target?.msgId };
    // The kernel is told first, so its own interrupt handling is under way before observers cancel
    // the cell another way (a late signal is then the rarer case; the kernel package guards it).
    try {
      if (this.options.spec.interruptMode === "signal") instance.process.signalGroup("SIGINT");
      else await this.request("control", interruptRequest(this.sessionId), INTERRUPT_REPLY_TIMEOUT_MS, "INTERRUPT_REPLY_TIMEOUT_MS");
    } finally {
      this.interruptEvents.fire(event);
    }
  }

  /** Stops the kernel for good (shutdown ladder, files removed); idempotent, never throws. */
  shutdown(): Promise<void> {
    this.stopped ??= this.enqueueLifecycle(async () => {
      this.failPending(kernelStoppedError("shut down"));
      await this.disposeInstance();
      this.setStatus({ status: "stopped" });
    }).catch(() => undefined);
    return this.stopped;
  }

  /** Shuts the kernel down and boots a new one with the same options; throws KernelStartError. */
  restart(reason = "restart requested"): Promise<void> {
    return this.enqueueLifecycle(async () => {
      if (this.stopped) throw new Error("cannot restart a kernel client that was shut down");
      this.setStatus({ status: "restarting", reason });
      this.failPending(kernelStoppedError("restarted"));
      await this.disposeInstance();
      await this.boot();
    });
  }

  private enqueueLifecycle(step: () => Promise<void>): Promise<void> {
    const run = this.lifecycle.then(step);
    this.lifecycle = run.catch(() => undefined);
    return run;
  }

  private async boot(): Promise<void> {
    const generation = ++this.generation;
    const current = (): boolean => generation === this.generation;
    try {
      this.instance = await KernelInstance.boot(this.options, this.sessionId, {
        log: this.log,
        onMessage: (message) => current() && this.route(message),
        onDeath: (reason) => current() && this.handleDeath(reason),
        onConnectionLost: (channel) => current() && this.current?.connectionLost(channel),
      });
    } catch (error) {
      this.setStatus({ status: "dead", reason: `start failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` });
      throw error;
    }
    this.setStatus({ status: "ready" });
    this.pump();
  }

  private async disposeInstance(): Promise<void> {
    const instance = this.instance;
    this.instance = undefined;
    this.generation += 1;
    await Promise.all([instance?.dispose(true), this.dying]);
  }

  private handleDeath(reason: string): void {
    // The instance is already tearing itself down; keep its promise so shutdown waits for the cleanup.
    this.dying = this.instance?.dispose(false);
    this.instance = undefined;
    this.generation += 1;
    this.setStatus({ status: "dead", reason });
    this.failPending(kernelDiedError(reason));
  }

  private failPending(error: unknown): void {
    this.failExecutions(error);
    for (const pending of this.requests.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.requests.clear();
  }

  protected canSend(): boolean {
    return this.instance !== undefined && isAlive(this.statusValue);
  }

  protected sendExecution(future: ExecuteFuture): void {
    const instance = this.instance!;
    future.iopubDrained = () => instance.iopubDrained;
    instance.send("shell", future.request).catch((error: unknown) => future.fail(error));
  }

  private request<T>(channel: SendChannel, message: KernelMessage.IMessage, ms: number, deadline: string): Promise<T> {
    const instance = this.requireInstance();
    return new Promise<T>((resolve, reject) => {
      const id = message.header.msg_id;
      const timer = setTimeout(() => {
        this.requests.delete(id);
        reject(deadlineError(message.header.msg_type, deadline, ms));
      }, ms);
      this.requests.set(id, { resolve: resolve as (content: unknown) => void, reject, timer });
      instance.send(channel, message).catch((error: unknown) => {
        clearTimeout(timer);
        this.requests.delete(id);
        reject(error);
      });
    });
  }

  private requireInstance(): KernelInstance {
    if (this.instance && isAlive(this.statusValue)) return this.instance;
    throw this.statusValue === "dead" ? kernelDiedError("the kernel is dead") : kernelStoppedError(this.stopped ? "shut down" : "restarted");
  }

  private route(message: KernelMessage.IMessage): void {
    const parent = parentMsgId(message);
    const future = parent !== undefined && this.current?.msgId === parent ? this.current : undefined;
    if (message.channel === "iopub") return this.routeIOPub(message as KernelMessage.IIOPubMessage, future);
    if (message.channel === "stdin") {
      if (future && message.header.msg_type === "input_request") void this.answerInput(future, message as KernelMessage.IInputRequestMsg);
      return;
    }
    if (future && message.header.msg_type === "execute_reply") return future.handleReply(message as KernelMessage.IExecuteReplyMsg);
    const pending = parent === undefined ? undefined : this.requests.get(parent);
    if (!pending) return this.log("debug", "unmatched kernel reply", { type: message.header.msg_type });
    this.requests.delete(parent!);
    clearTimeout(pending.timer);
    pending.resolve(message.content);
  }

  private routeIOPub(message: KernelMessage.IIOPubMessage, future: ExecuteFuture | undefined): void {
    const type: string = message.header.msg_type;
    if (type === "status") {
      const state = (message as KernelMessage.IStatusMsg).content.execution_state;
      if ((state === "busy" || state === "idle") && isAlive(this.statusValue)) this.setStatus({ status: state });
      future?.handleIOPub(message);
      return;
    }
    if (type === "iopub_welcome") return;
    if (future && future.handleIOPub(message)) return;
    if (!future || type !== "execute_input") this.iopubEvents.fire(message);
  }

  private async answerInput(future: ExecuteFuture, request: KernelMessage.IInputRequestMsg): Promise<void> {
    const { prompt, password } = request.content;
    let value = "";
    try {
      if (future.options.onInput) value = await future.options.onInput(prompt, password);
      else this.log("warn", "input_request without an input handler; answering with an empty line");
    } catch (error) {
      this.log("warn", "input handler failed; answering with an empty line", { error: String(error) });
    }
    await this.instance?.send("stdin", inputReply(this.sessionId, request, value)).catch(() => undefined);
  }

  protected readonly log: Log = (level, message, data): void => {
    this.options.log?.(level, message, data);
  };
}
