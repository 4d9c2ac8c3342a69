import { join } from "node:path";
import type { KernelBridge } from "../bridge/index.js";
import { bridgeEnv } from "../bridge/index.js";
import { AppError } from "../errors/index.js";
import { channelAddress, CHANNELS, startKernel, superviseKernel, RestartPolicy, type ChannelName, type Kernel, type KernelClient, type RemoteKernelOptions } from "../kernel/index.js";
import type { Disposable, Log } from "../platform/index.js";
import type { RpcServer } from "../rpc/index.js";
import { SESSION_KERNEL_ARGV } from "./kernelArgv.js";
import type { KernelPlan } from "./kernelPlan.js";
import { startSessionRemoteKernel } from "./remoteKernel.js";

/** Where a notebook's relay reaches a session's kernel (K-14): each channel's address and the process to watch. */
export interface RelayTarget {
  readonly addresses: Readonly<Record<ChannelName, string>>;
  readonly pid: number;
}

/** What booting a session's kernel reads of the session. */
export interface KernelBoot {
  readonly plan: KernelPlan;
  readonly install: string;
  /** The kernel's working directory. */
  readonly cwd: string;
  readonly runDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly rpc: RpcServer;
  /** Read at each (re)start: a restart after a reload that added MCP servers gets `mcp` and their typed methods. */
  readonly bridge: () => KernelBridge;
  /** Read at each (re)start: the checkpoint variables of that start (K-15). */
  readonly startEnv: () => Record<string, string>;
  /** Told when a start finished: the first boot, and each restart the kernel came back ready from. */
  readonly onReady: () => void;
  /** Told when the session's own supervised kernel died (the supervisor restarts it). */
  readonly onDead?: () => void;
  /** Read at each (re)start: the host variables the kernel must not inherit (the model's key, servers' secrets). */
  readonly withoutEnv: () => string[];
  /** A notebook relay's HMAC key (K-14): the kernel signs with it and is the notebook's to restart. */
  readonly relayKey?: string;
  readonly log?: Log;
  readonly onProgress?: (message: string) => void;
}

/**
 * The kernel a session runs code in, once booted: its own process (supervised, K-9), a remote
 * kernel (K-12), or none when a notebook's kernel connects from outside (K-13). Cells that wait on
 * RPC calls end with the kernel: an interrupt cancels its cell's calls, a death fails them all.
 */
export class KernelSlot {
  private value: Kernel | undefined;
  /** The kernel process this machine runs for the session, when it runs one. */
  private local: KernelClient | undefined;
  private readonly watchers: Disposable[] = [];

  constructor(private readonly external: boolean) {}

  /** The session's own kernel. Throws AppError conflict for an external kernel, kernel_died when there is none. */
  get current(): Kernel {
    if (this.external) {
      throw new AppError("conflict", "this session's kernel belongs to a notebook or console outside albedo; run code and interrupts there");
    }
    if (this.value === undefined) throw new AppError("kernel_died", "the session has no kernel");
    return this.value;
  }

  /** The kernel's status as reports show it, never throwing. */
  get status(): Kernel["status"] | "none" | "external" {
    return this.external ? "external" : (this.value?.status ?? "none");
  }

  get pid(): number | undefined {
    return this.value?.pid;
  }

  async boot(boot: KernelBoot): Promise<void> {
    const { plan, rpc } = boot;
    if (plan.kind === "external") return;
    if (plan.kind === "remote") return this.bootRemote(boot, plan.remote);
    const { sandbox, launch } = plan;
    boot.onProgress?.(`starting kernel: ${launch.source}${sandbox.kind === "bwrap" ? " (sandboxed)" : ""}`);
    const pythonPath = [join(boot.install, "kernel"), boot.env.PYTHONPATH].filter(Boolean).join(":");
    // The session kernel binds its main loop's socket at every start; the ROUTER keeps dialling it.
    rpc.dialKernel();
    const kernel = await startKernel({
      spec: launch,
      runDir: boot.runDir,
      cwd: boot.cwd,
      extraArgv: SESSION_KERNEL_ARGV,
      extraEnv: () => ({ ...bridgeEnv(boot.bridge()), PYTHONPATH: pythonPath, ...boot.startEnv() }),
      // Model-written code must not find the model's key (it would print it into the transcript), nor a server's secrets.
      withoutEnv: boot.withoutEnv,
      ...(sandbox.wrap ? { wrap: sandbox.wrap } : {}),
      ...(boot.log ? { log: boot.log } : {}),
      ...(boot.relayKey !== undefined ? { key: boot.relayKey } : {}),
    });
    this.watch(kernel, rpc, boot.onReady, boot.relayKey === undefined ? boot.onDead : undefined);
    this.local = kernel;
    boot.onReady();
    // A relayed kernel's death is the notebook's to see: its launcher exits and Jupyter restarts it.
    if (boot.relayKey === undefined) this.watchers.push(superviseKernel(kernel, new RestartPolicy(), boot.log ? { log: boot.log } : {}));
  }

  /** A kernel on a Jupyter Server (K-12). Its server restarts it when it dies; the client boots it again. */
  private async bootRemote(boot: KernelBoot, remote: RemoteKernelOptions): Promise<void> {
    boot.onProgress?.(`starting a remote kernel on ${remote.url}`);
    const kernel = await startSessionRemoteKernel({
      remote, rpc: boot.rpc, install: boot.install, bridge: boot.bridge, ...(boot.log ? { log: boot.log } : {}),
    });
    this.watch(kernel, boot.rpc);
  }

  private watch(kernel: Kernel, rpc: RpcServer, onReady?: () => void, onDead?: () => void): void {
    this.value = kernel;
    this.watchers.push(
      kernel.onInterrupt((event) => {
        if (event.msgId !== undefined) rpc.cancelCell(event.msgId, "the cell was interrupted");
      }),
      kernel.onStatus((event) => {
        if (event.status === "dead") {
          onDead?.();
          rpc.failAll("kernel_died", `the kernel died: ${event.reason ?? "unknown reason"}`);
        }
        if (event.status === "ready") onReady?.();
      }),
    );
  }

  /** The kernel process this machine runs, to restart; throws AppError conflict for a notebook's (`relayed`), remote or external kernel. */
  restartable(relayed: boolean): KernelClient {
    if (this.local === undefined || relayed) {
      throw new AppError("conflict", "this session's kernel is restarted where it runs (a notebook restarts its own kernel, empty, as Jupyter does)");
    }
    return this.local;
  }

  /** Where a notebook's relay reaches the local kernel; undefined unless `relayed` and the kernel runs. */
  relayTarget(relayed: boolean): RelayTarget | undefined {
    const info = relayed ? this.local?.connection : undefined;
    const pid = this.local?.pid;
    if (info === undefined || pid === undefined) return undefined;
    return { addresses: Object.fromEntries(CHANNELS.map((channel) => [channel, channelAddress(info, channel)])) as Record<ChannelName, string>, pid };
  }

  /** Stops watching and supervising, then shuts the kernel down (ladder). */
  async shutdown(): Promise<void> {
    for (const watcher of this.watchers.splice(0)) watcher.dispose();
    await this.value?.shutdown();
  }
}
