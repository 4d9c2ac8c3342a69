/**
 * One server's life (M-2): starting → running, restarted at most MAX_MCP_RESTARTS times (with a
 * doubling backoff) when its connection closes by itself, then `failed` with its last stderr
 * lines; `stopped` once stop() was called. A hub owns one, or shares one through SharedServers.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Emitter, type Disposable, type Log } from "../platform/index.js";
import type { PriorDiscovery } from "@modelcontextprotocol/client";
import type { Connection, McpClientInfo } from "./connection.js";
import { MAX_MCP_DIAGNOSTICS_PER_SERVER, MAX_MCP_RESTARTS, MCP_RESTART_BACKOFF_MS } from "./limits.js";
import type { ResolvedServer } from "./resolve.js";

export type McpServerState = "starting" | "running" | "failed" | "stopped";

export interface ManagedServerOptions {
  readonly log: Log;
  readonly clientInfo: McpClientInfo;
}

export class ManagedServer {
  private current: McpServerState = "starting";
  private connection: Connection | undefined;
  private restarts = 0;
  private problem: string[] = [];
  private starting: Promise<void> | undefined;
  /** The era the last connection found, so a restart skips the probe (dropped when a start with it fails). */
  private prior: PriorDiscovery | undefined;
  private readonly changed = new Emitter<void>();
  /** Aborts a start or a backoff in progress when the server is stopped. */
  private readonly stopping = new AbortController();

  constructor(
    readonly resolved: ResolvedServer,
    private readonly options: ManagedServerOptions,
  ) {}

  get state(): McpServerState {
    return this.current;
  }

  /** The running connection, or undefined while the server is not running. */
  get live(): Connection | undefined {
    return this.current === "running" ? this.connection : undefined;
  }

  /** Starts the server (once); resolves when it runs or failed, never rejects. */
  start(): Promise<void> {
    this.starting ??= this.run();
    return this.starting;
  }

  /** Diagnostics of the tool list, and why the server failed (with its last stderr lines), bounded. */
  diagnostics(): string[] {
    const all = [...(this.connection?.tools.diagnostics ?? []), ...this.problem];
    if (all.length <= MAX_MCP_DIAGNOSTICS_PER_SERVER) return all;
    return [...all.slice(0, MAX_MCP_DIAGNOSTICS_PER_SERVER - 1), `and ${all.length - MAX_MCP_DIAGNOSTICS_PER_SERVER + 1} more diagnostics`];
  }

  /** Fires after the tool list changed (a tools/list_changed refresh, or a restart). */
  onToolsChanged(listener: () => void): Disposable {
    return this.changed.on(listener);
  }

  /** Stops the server for good: its connection is closed (the stdio ladder). */
  async stop(): Promise<void> {
    this.current = "stopped";
    this.stopping.abort();
    await this.connection?.close();
    // A start in flight ends (its process with it) before stop() resolves.
    await this.starting;
    this.changed.clear();
  }

  private async run(): Promise<void> {
    // The SDK comes with the connection, loaded by the first server that starts: a process that only reads settings never loads it.
    const { Connection, McpStartError } = await import("./connection.js");
    for (;;) {
      // A close while the connection opens is the open's own failure, retried by this loop: only
      // one that ran may start a restart of its own, or two loops would restart side by side.
      let opened: Connection | undefined;
      try {
        const connection = await Connection.open(this.resolved, {
          log: this.options.log,
          clientInfo: this.options.clientInfo,
          ...(this.prior === undefined ? {} : { prior: this.prior }),
          onClosed: () => opened !== undefined && opened === this.connection && this.closedByItself(),
          onToolsChanged: () => this.changed.fire(),
        }, this.stopping.signal);
        if (this.current === "stopped") return await connection.close();
        opened = connection;
        this.connection = connection;
        this.prior = connection.verdict;
        this.current = "running";
        this.problem = [];
        // Closed between its tool list and now: its close was not heard, so it is handled here.
        if (connection.isClosed) this.closedByItself();
        return;
      } catch (error) {
        if (this.current === "stopped") return;
        const start = error instanceof McpStartError ? error : new McpStartError(String(error), false, []);
        // A server that exited on the era probe gets the legacy handshake on its restart; a stale
        // verdict (the server changed its era) must not fail every restart: the next one probes.
        this.prior = start.probeClosed && this.prior === undefined ? { kind: "legacy" } : undefined;
        if (!start.retry || !(await this.backoff())) return this.fail(`${this.resolved.name} did not start${this.restartsText()}: ${start.message}`, start.stderr);
      }
    }
  }

  /** Counts the next restart and waits before it; false when restarts are used up or the server was stopped meanwhile. */
  private async backoff(): Promise<boolean> {
    if (this.restarts >= MAX_MCP_RESTARTS) return false;
    this.restarts += 1;
    await sleep(MCP_RESTART_BACKOFF_MS * 2 ** (this.restarts - 1), undefined, { signal: this.stopping.signal }).catch(() => undefined);
    return this.current !== "stopped";
  }

  private closedByItself(): void {
    if (this.current === "stopped") return;
    const stderr = this.connection?.stderrTail() ?? [];
    this.current = "starting";
    this.options.log("warn", `mcp ${this.resolved.name}: the server closed its connection`, { server: this.resolved.name, restarts: this.restarts });
    void (async () => {
      if (!(await this.backoff())) return this.fail(`${this.resolved.name} closed its connection${this.restartsText()}`, stderr);
      this.starting = this.run();
      await this.starting;
      if (this.current === "running") this.changed.fire();
    })();
  }

  private restartsText(): string {
    return this.restarts === 0 ? "" : ` (restarted ${this.restarts} times, MAX_MCP_RESTARTS = ${MAX_MCP_RESTARTS})`;
  }

  private fail(message: string, stderr: readonly string[]): void {
    if (this.current === "stopped") return;
    this.current = "failed";
    this.connection = undefined;
    this.problem = [message, ...stderr.map((line) => `stderr: ${line}`)];
    this.options.log("warn", `mcp ${message}`, { server: this.resolved.name });
  }
}
