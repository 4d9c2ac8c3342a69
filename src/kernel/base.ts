/**
 * What every kernel client shares, local or remote: its status and the events it fires, and
 * executions sent one at a time in call order, each running whatever the outcome of the one before.
 */
import type { KernelMessage } from "@jupyterlab/services";
import type { ExecuteFuture } from "./future.js";
import type { InterruptEvent, KernelStatus, StatusEvent } from "./kernel.js";
import { type Disposable, Emitter, type Log } from "../platform/index.js";
import { INTERRUPT_BEGIN_TIMEOUT_MS } from "./limits.js";


export abstract class KernelBase {
  protected statusValue: KernelStatus = "starting";
  protected current: ExecuteFuture | undefined;
  protected readonly queue: ExecuteFuture[] = [];
  protected readonly statusEvents = new Emitter<StatusEvent>((error) => this.listenerFailed(error));
  protected readonly iopubEvents = new Emitter<KernelMessage.IIOPubMessage>((error) => this.listenerFailed(error));
  protected readonly interruptEvents = new Emitter<InterruptEvent>((error) => this.listenerFailed(error));

  get status(): KernelStatus {
    return this.statusValue;
  }

  /** Status changes, as they happen. */
  onStatus(listener: (event: StatusEvent) => void): Disposable {
    return this.statusEvents.on(listener);
  }

  /** Iopub messages not tied to the in-flight execution (status and welcome excluded). */
  onIOPub(listener: (message: KernelMessage.IIOPubMessage) => void): Disposable {
    return this.iopubEvents.on(listener);
  }

  /** Fires before an interrupt is sent, with the execution it targets. */
  onInterrupt(listener: (event: InterruptEvent) => void): Disposable {
    return this.interruptEvents.on(listener);
  }

  /** The execution currently running in the kernel, if any. */
  currentExecution(): { readonly msgId: string } | undefined {
    return this.current ? { msgId: this.current.msgId } : undefined;
  }

  /**
   * The execution an interrupt is for, once the kernel has begun it; false when it ended meanwhile.
   * Sent with its cell, an interrupt would find the kernel between requests, where ipykernel
   * ignores SIGINT, and the cell would run on: so it waits for the kernel's word that the cell
   * began (see ExecuteFuture.begun), at most INTERRUPT_BEGIN_TIMEOUT_MS, then goes anyway.
   */
  protected async interruptTarget(): Promise<ExecuteFuture | undefined | false> {
    const target = this.current;
    if (target === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([target.begun, new Promise<void>((resolve) => (timer = setTimeout(resolve, INTERRUPT_BEGIN_TIMEOUT_MS)))]);
    clearTimeout(timer);
    return this.current === target ? target : false;
  }

  /** Whether an execution may be sent now (a kernel is up and ready). */
  protected abstract canSend(): boolean;
  /** Hands one execution to the kernel; a failure fails that future. */
  protected abstract sendExecution(future: ExecuteFuture): void;
  protected abstract readonly log: Log;

  /** Sends the next queued execution when none runs and the kernel can take it. */
  protected pump(): void {
    if (this.current || !this.canSend()) return;
    const future = this.queue.shift();
    if (!future) return;
    this.current = future;
    const finished = () => {
      if (this.current !== future) return;
      this.current = undefined;
      this.pump();
    };
    void future.done.then(finished, finished);
    future.timeline.sent();
    this.sendExecution(future);
  }

  /** Fails the running execution and every queued one. */
  protected failExecutions(error: unknown): void {
    const futures = [...(this.current ? [this.current] : []), ...this.queue.splice(0)];
    this.current = undefined;
    for (const future of futures) future.fail(error);
  }

  protected setStatus(event: StatusEvent): void {
    if (event.status === this.statusValue && event.reason === undefined) return;
    this.statusValue = event.status;
    this.statusEvents.fire(event);
  }

  private listenerFailed(error: unknown): void {
    this.log("error", "a kernel event listener threw", { error: String(error) });
  }
}

/** Whether a kernel in `status` takes requests. */
export function isAlive(status: KernelStatus): boolean {
  return status === "ready" || status === "busy" || status === "idle";
}
