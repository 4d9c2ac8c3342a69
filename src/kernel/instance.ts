/**
 * One booted kernel: its process, connection file, sockets and heartbeat. Booting ends at the
 * readiness rule (K-2): a kernel_info_reply AND an iopub_welcome, so no later iopub message is lost.
 * Teardown is the shutdown ladder (K-9). A restart makes a new instance; this one is then done.
 */
import { randomUUID } from "node:crypto";
import type { KernelMessage } from "@jupyterlab/services";
import { KernelChannels, RECEIVE_BOUNDS, type ReceiveChannel, type SendChannel } from "./channels.js";
import {
  channelAddress, connectionText, ensureRunDir, newConnectionInfo, removeConnectionFiles, writeConnectionFile, type ConnectionInfo,
} from "./connection.js";
import { KernelStartError } from "./errors.js";
import { Heartbeat } from "./heartbeat.js";
import type { KernelInfo, StartKernelOptions, WrappedLaunch } from "./kernel.js";
import { kernelArgv, KernelProcess, type ProcessExit } from "./launcher.js";
import { KERNEL_INFO_RETRY_MS, KERNEL_READY_TIMEOUT_MS, SHUTDOWN_REPLY_TIMEOUT_MS, SIGKILL_TIMEOUT_MS } from "./limits.js";
import { kernelInfoRequest, shutdownRequest } from "./messages.js";
import { createSigner } from "./signing.js";
import { parentMsgId } from "./wire.js";
import type { Log } from "../platform/index.js";


export interface InstanceHandlers {
  /** Every verified message after boot, and non-status messages seen during boot. */
  onMessage(message: KernelMessage.IMessage): void;
  /** The process exited or its heartbeat stopped while nobody was shutting it down. */
  onDeath(reason: string): void;
  /** A connection dropped for a message over its socket's bound was made again (see ChannelHandlers). */
  onConnectionLost(channel: ReceiveChannel): void;
  readonly log: Log;
}

export class KernelInstance {
  private ready = false;
  private stopping: Promise<void> | undefined;
  private heartbeat: Heartbeat | undefined;
  private handshake: ((message: KernelMessage.IMessage) => void) | undefined;
  private readonly channels: KernelChannels;
  private kernelInfo: KernelInfo | undefined;

  private constructor(
    readonly info: ConnectionInfo,
    /** The connection file on disk; undefined when a wrapper delivered it (sandboxed kernels). */
    readonly connectionFile: string | undefined,
    readonly process: KernelProcess,
    private readonly sessionId: string,
    private readonly handlers: InstanceHandlers,
  ) {
    const welcomeTopic = `albedo-welcome-${randomUUID()}`;
    this.channels = new KernelChannels(info, createSigner(info.key), sessionId, welcomeTopic, {
      onMessage: (message) => this.dispatch(message),
      onDropped: (channel, reason) => handlers.log("warn", "dropped a kernel message", { channel, reason }),
      onConnectionLost: (channel) => {
        const bound = RECEIVE_BOUNDS[channel];
        handlers.log("warn", `the kernel sent a message over ${bound.name} (${bound.bytes} bytes); albedo dropped it and connected again`, { channel, pid: process.pid });
        handlers.onConnectionLost(channel);
      },
      // The sockets are closed already: the kernel is of no more use, so it counts as lost, with the reason.
      onCut: (reason) => this.die(reason),
    });
  }

  /** Launches a kernel and waits for readiness; throws KernelStartError (after cleaning up) when it never gets there. */
  static async boot(options: StartKernelOptions, sessionId: string, handlers: InstanceHandlers): Promise<KernelInstance> {
    await ensureRunDir(options.runDir);
    const info = await newConnectionInfo(options.runDir, options.transport ?? "ipc", options.key);
    // A wrapper (the sandbox) hands the kernel its connection file itself: the key then never sits on disk.
    const connectionFile = options.wrap ? undefined : await writeConnectionFile(options.runDir, info);
    let process: KernelProcess;
    try {
      const extra = typeof options.extraEnv === "function" ? options.extraEnv() : options.extraEnv;
      const env: NodeJS.ProcessEnv = { ...globalThis.process.env, JPY_PARENT_PID: String(globalThis.process.pid), ...options.spec.env, ...extra };
      for (const name of (typeof options.withoutEnv === "function" ? options.withoutEnv() : options.withoutEnv) ?? []) delete env[name];
      const launch: WrappedLaunch = options.wrap
        ? options.wrap({ argv: [...options.spec.argv, ...(options.extraArgv ?? [])], env, connection: connectionText(info), cwd: options.cwd })
        : { argv: kernelArgv(options.spec.argv, connectionFile!, options.extraArgv), fds: [] };
      handlers.log("info", "starting kernel", { argv: launch.argv, transport: info.transport });
      process = KernelProcess.launch({ launch, env: launch.env ?? env, cwd: options.cwd, log: handlers.log });
    } catch (error) {
      await removeConnectionFiles(connectionFile, info);
      throw error;
    }
    const instance = new KernelInstance(info, connectionFile, process, sessionId, handlers);
    try {
      instance.kernelInfo = await instance.awaitReady();
    } catch (error) {
      await instance.dispose(false);
      throw error;
    }
    instance.supervise();
    return instance;
  }

  /** The kernel_info_reply content received while booting. */
  get kernelInfoReply(): KernelInfo {
    return this.kernelInfo!;
  }

  /** Whether all the kernel sent on iopub so far was taken in (see KernelChannels). */
  get iopubDrained(): boolean {
    return this.channels.iopubDrained;
  }

  /** Sends on one of the request channels. */
  send(channel: SendChannel, message: KernelMessage.IMessage): Promise<void> {
    return this.channels.send(channel, message);
  }

  /**
   * Stops the kernel and removes its files; idempotent. Graceful: shutdown_request, wait
   * SHUTDOWN_REPLY_TIMEOUT_MS, then SIGTERM/SIGKILL. Not graceful (a dead or hung kernel): SIGKILL.
   */
  dispose(graceful: boolean): Promise<void> {
    this.stopping ??= this.teardown(graceful);
    return this.stopping;
  }

  private async teardown(graceful: boolean): Promise<void> {
    this.heartbeat?.stop();
    this.handshake = undefined;
    if (graceful && !this.process.hasExited) {
      this.handlers.log("info", "sending shutdown_request", { pid: this.process.pid });
      this.channels.send("control", shutdownRequest(this.sessionId, false)).catch(() => undefined);
      await this.process.waitExit(SHUTDOWN_REPLY_TIMEOUT_MS);
    }
    if (graceful) await this.process.terminate();
    else {
      this.process.signalGroup("SIGKILL");
      await this.process.waitExit(SIGKILL_TIMEOUT_MS);
    }
    this.channels.close();
    await removeConnectionFiles(this.connectionFile, this.info);
  }

  private awaitReady(): Promise<KernelInfo> {
    return new Promise<KernelInfo>((resolve, reject) => {
      const asked = new Set<string>();
      let reply: KernelInfo | undefined;
      let welcomed = false;
      const finish = (error?: Error): void => {
        clearInterval(retry);
        clearTimeout(deadline);
        this.handshake = undefined;
        if (error) reject(error);
        else resolve(reply!);
      };
      const ask = (): void => {
        const request = kernelInfoRequest(this.sessionId);
        asked.add(request.header.msg_id);
        this.channels.send("shell", request).catch(() => undefined);
      };
      this.handshake = (message) => {
        const type: string = message.header.msg_type;
        if (type === "iopub_welcome") welcomed = true;
        else if (type === "kernel_info_reply" && asked.has(parentMsgId(message) ?? "")) reply = message.content as KernelInfo;
        else return;
        if (reply !== undefined && welcomed) finish();
      };
      const retry = setInterval(ask, KERNEL_INFO_RETRY_MS);
      const deadline = setTimeout(() => finish(this.startError(`kernel not ready within KERNEL_READY_TIMEOUT_MS (${KERNEL_READY_TIMEOUT_MS} ms)`, undefined)), KERNEL_READY_TIMEOUT_MS);
      void this.process.exited.then((exit) => {
        if (this.handshake) finish(this.startError("kernel exited before it was ready", exit));
      });
      ask();
    });
  }

  private startError(message: string, exit: ProcessExit | undefined): KernelStartError {
    const how = exit === undefined ? "" : exit.signal ? ` (signal ${exit.signal})` : ` (exit code ${exit.code})`;
    return new KernelStartError(message + how, exit?.code ?? null, exit?.signal ?? null, this.process.stderrTail());
  }

  private supervise(): void {
    this.ready = true;
    this.heartbeat = new Heartbeat(channelAddress(this.info, "hb"), (misses) => this.die(`heartbeat lost (${misses} missed pings)`));
    this.heartbeat.start();
    void this.process.exited.then((exit) => {
      this.die(exit.signal ? `process killed by ${exit.signal}` : `process exited with code ${exit.code}`);
    });
  }

  private die(reason: string): void {
    if (this.stopping) return;
    this.handlers.log("warn", "kernel died", { reason, pid: this.process.pid });
    void this.dispose(false);
    this.handlers.onDeath(reason);
  }

  private dispatch(message: KernelMessage.IMessage): void {
    if (this.ready) return this.handlers.onMessage(message);
    this.handshake?.(message);
    const type: string = message.header.msg_type;
    if (type !== "status" && type !== "iopub_welcome" && type !== "kernel_info_reply") this.handlers.onMessage(message);
  }
}
