/**
 * The MCP servers of one session (M-2, M-5): started in parallel when it opens, reloaded by
 * entry (only a changed entry restarts), listed with their tools, and called with arguments
 * checked first. Starting never fails the session: a server that cannot start is `failed`
 * with diagnostics.
 */
import { AppError } from "../errors/index.js";
import { Emitter, type Disposable, type Log } from "../platform/index.js";
import type { McpClientInfo } from "./connection.js";
import { MAX_MCP_REMEMBERED_LINKS } from "./limits.js";
import { toolPolicy } from "./glob.js";
import { ManagedServer } from "./managedServer.js";
import { splitQualified } from "./names.js";
import type { InactiveServer, McpOrigin, ResolvedServer, ResolvedServers } from "./resolve.js";
import type { McpCallResult, McpProgress, McpReadResult } from "./result.js";
import { serverKey, type SharedServers } from "./sharedServers.js";
import type { McpTool, McpToolDetail, McpToolInfo } from "./toolList.js";

/** What `initialize` names albedo as, unless the hub is told otherwise. */
export const DEFAULT_MCP_CLIENT_INFO: McpClientInfo = { name: "albedo", version: "0" };

export interface McpHubOptions {
  readonly log: Log;
  /** Where servers with `"shared": true` come from; without it every server is the hub's own. */
  readonly sharedPool?: SharedServers;
  readonly clientInfo?: McpClientInfo;
}

export interface McpServerStatus {
  readonly name: string;
  readonly status: "starting" | "running" | "failed" | "stopped" | "disabled";
  readonly tools: number;
  readonly diagnostics: readonly string[];
  readonly origin: McpOrigin;
  /** The process (and process group) of a running stdio server. */
  readonly pid?: number;
  /** The protocol version a running server speaks (2026-07-28 and later: the stateless era; earlier: the legacy handshake). */
  readonly protocol?: string;
  /** The era of a running server: "modern" (2026-07-28 and later) or "legacy". */
  readonly era?: "modern" | "legacy";
}

/** A server's tool list was refreshed (tools/list_changed, or a restart). */
export interface McpToolsChanged {
  readonly server: string;
}

export interface McpCallOptions {
  readonly signal: AbortSignal;
  /** Who asks: "python" (a cell) or "tool" (the model's function tool); logged with the call. */
  readonly via?: string;
  /** Hears the server's progress notifications for this call (the request then carries a progress token). */
  readonly onProgress?: (progress: McpProgress) => void;
  /** Told the status messages of a call the server runs as a task (redacted, bounded). */
  readonly onStatus?: (text: string) => void;
}

/**
 * What one reload did to the servers, by name (each list sorted): `added` and `removed` from the
 * configuration, `restarted` (the entry changed), `started` (listed before, not running, now
 * starting: approved or enabled) and `stopped` (still listed, no longer running: disabled, or
 * its changed entry awaits approval).
 */
export interface McpReloadChange {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly restarted: readonly string[];
  readonly started: readonly string[];
  readonly stopped: readonly string[];
}

/** A reload that changed nothing. */
export const NO_MCP_CHANGE: McpReloadChange = Object.freeze({ added: [], removed: [], restarted: [], started: [], stopped: [] });

interface Slot {
  readonly key: string;
  readonly server: ManagedServer;
  readonly subscription: Disposable;
}

export class McpHub {
  private readonly slots = new Map<string, Slot>();
  private resolved: ResolvedServers = { servers: [], inactive: [], diagnostics: [] };
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Aborted by close(): a start in flight stops being waited for, so close() need not wait out its deadline. */
  private readonly closing = new AbortController();
  private readonly changed = new Emitter<McpToolsChanged>();
  private readonly clientInfo: McpClientInfo;
  /** The server each recently returned link came from, by uri (oldest first, at most MAX_MCP_REMEMBERED_LINKS). */
  private readonly links = new Map<string, string>();

  constructor(private readonly options: McpHubOptions) {
    this.clientInfo = options.clientInfo ?? DEFAULT_MCP_CLIENT_INFO;
  }

  /** Starts every server of `resolved` in parallel, each within its startup deadline; never rejects. */
  async start(resolved: ResolvedServers): Promise<void> {
    await this.reload(resolved);
  }

  /**
   * Stops servers that are gone or whose entry changed, starts new and changed ones; the rest keep
   * running. Answers what changed, once every start has settled. Never rejects.
   */
  reload(resolved: ResolvedServers): Promise<McpReloadChange> {
    const run = this.chain.then(() => this.apply(resolved));
    this.chain = run.catch(() => undefined);
    return run.catch(() => NO_MCP_CHANGE);
  }

  /** Every configured server: running or not, disabled, awaiting approval, failed. */
  servers(): McpServerStatus[] {
    const statuses = [...this.slots.entries()].map(([name, slot]) => this.status(name, slot));
    for (const item of this.resolved.inactive) statuses.push(this.inactiveStatus(item));
    return statuses.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Diagnostics of the configuration that concern no one server (the approvals file unreadable, too many servers). */
  diagnostics(): string[] {
    return this.resolved.diagnostics.filter((item) => item.server === undefined).map((item) => item.message);
  }

  /** The tools of every running server (or of `server`), as `server.tool` with a one-line description. */
  tools(server?: string): McpToolInfo[] {
    const names = server === undefined ? [...this.slots.keys()] : this.slots.has(server) ? [server] : [];
    return names.sort().flatMap((name) => [...(this.slots.get(name)!.server.live?.tools.tools.values() ?? [])].map(info));
  }

  /** One tool in full; throws AppError not_found (unknown), forbidden (denied), conflict (server not running). */
  describe(qualified: string): McpToolDetail {
    const { tool } = this.find(qualified);
    const { validate: _validate, ...detail } = tool;
    return detail;
  }

  /**
   * Calls `server.tool` with `args`. An isError result is returned (is_error true). Throws AppError:
   * not_found, forbidden, conflict (not running, or its schema unusable), invalid_params (naming the
   * JSON path), timeout, cancelled (`signal`; the server gets notifications/cancelled), limit_exceeded.
   */
  async call(qualified: string, args: Record<string, unknown>, options: McpCallOptions): Promise<McpCallResult> {
    const { slot, tool } = this.find(qualified);
    this.options.log("debug", `mcp call ${qualified}${options.via === undefined ? "" : ` via ${options.via}`}`, { server: tool.server, tool: tool.tool });
    const result = await slot.server.live!.call(tool.tool, args, options.signal, options.onProgress, options.onStatus);
    for (const link of result.links) this.remember(link.uri, link.server);
    return result;
  }

  /**
   * Reads the resource `uri` from `server`, or from the server whose tool last returned a link to
   * it, or from the one running server. Throws AppError not_found (no such server, or it cannot
   * be told which), conflict (not running, or the read failed), limit_exceeded.
   */
  async read(uri: string, server: string | undefined, signal: AbortSignal): Promise<McpReadResult> {
    const running = [...this.slots.entries()].filter(([, slot]) => slot.server.live !== undefined).map(([name]) => name);
    const name = server ?? this.links.get(uri) ?? (running.length === 1 ? running[0] : undefined);
    if (name === undefined) throw new AppError("not_found", `no tool returned a link to ${uri.slice(0, 200)} in this session; say which server to read it from: mcp.read(uri, server="NAME")`);
    const slot = this.slots.get(name);
    if (slot === undefined) throw new AppError("not_found", `no MCP server named ${name} runs in this session`);
    const live = slot.server.live;
    if (live === undefined) throw new AppError("conflict", `MCP server ${name} is ${slot.server.state}, not running${this.problemOf(slot)}`);
    return live.read(uri, signal);
  }

  private remember(uri: string, server: string): void {
    this.links.delete(uri);
    this.links.set(uri, server);
    if (this.links.size > MAX_MCP_REMEMBERED_LINKS) this.links.delete(this.links.keys().next().value!);
  }

  /** Listens for refreshed tool lists. */
  onToolsChanged(listener: (event: McpToolsChanged) => void): Disposable {
    return this.changed.on(listener);
  }

  /** Stops every server of this hub (the stdio ladder) and releases shared ones; later calls find nothing. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    await this.reload({ servers: [], inactive: [], diagnostics: [] });
    this.changed.clear();
  }

  private async apply(resolved: ResolvedServers): Promise<McpReloadChange> {
    const wanted = new Map((this.closed && resolved.servers.length > 0 ? [] : resolved.servers).map((server) => [server.name, server]));
    const runningBefore = new Set(this.slots.keys());
    const listedBefore = new Set([...runningBefore, ...this.resolved.inactive.map((item) => item.name)]);
    const stops = [...this.slots.entries()].filter(([name, slot]) => wanted.get(name) === undefined || serverKey(wanted.get(name)!) !== slot.key);
    await Promise.all(stops.map(([name, slot]) => this.drop(name, slot)));
    this.resolved = resolved;
    const starts = [...wanted.values()].filter((server) => !this.slots.has(server.name)).map((server) => this.add(server));
    const closing = new Promise<void>((resolve) => this.closing.signal.addEventListener("abort", () => resolve(), { once: true }));
    await Promise.race([Promise.all(starts.map((server) => server.start())), closing]);
    const listedAfter = new Set([...wanted.keys(), ...resolved.inactive.map((item) => item.name)]);
    const stopped = stops.map(([name]) => name);
    const sorted = (names: Iterable<string>, keep: (name: string) => boolean) => [...names].filter(keep).sort();
    return {
      added: sorted(listedAfter, (name) => !listedBefore.has(name)),
      removed: sorted(listedBefore, (name) => !listedAfter.has(name)),
      restarted: sorted(stopped, (name) => wanted.has(name)),
      started: sorted(wanted.keys(), (name) => listedBefore.has(name) && !runningBefore.has(name)),
      stopped: sorted(stopped, (name) => !wanted.has(name) && listedAfter.has(name)),
    };
  }

  private add(resolved: ResolvedServer): ManagedServer {
    const pool = resolved.shared ? this.options.sharedPool : undefined;
    const server = pool?.acquire(resolved) ?? new ManagedServer(resolved, { log: this.options.log, clientInfo: this.clientInfo });
    const subscription = server.onToolsChanged(() => this.changed.fire({ server: resolved.name }));
    this.slots.set(resolved.name, { key: serverKey(resolved), server, subscription });
    return server;
  }

  private async drop(name: string, slot: Slot): Promise<void> {
    this.slots.delete(name);
    slot.subscription.dispose();
    const pool = slot.server.resolved.shared ? this.options.sharedPool : undefined;
    await (pool === undefined ? slot.server.stop() : pool.release(slot.server));
  }

  private find(qualified: string): { readonly slot: Slot; readonly tool: McpTool } {
    const parts = splitQualified(qualified);
    if (parts === undefined) throw new AppError("not_found", `"${qualified}" is not a tool name of the form server.tool`);
    const slot = this.slots.get(parts.server);
    if (slot === undefined) throw new AppError("not_found", `no MCP server named ${parts.server} runs in this session`);
    if (!toolPolicy(slot.server.resolved.tools).allows(parts.tool)) throw new AppError("forbidden", `${qualified} is denied by the tools filter of ${parts.server}`);
    const live = slot.server.live;
    if (live === undefined) throw new AppError("conflict", `MCP server ${parts.server} is ${slot.server.state}, not running${this.problemOf(slot)}`);
    const tool = live.tools.tools.get(parts.tool);
    if (tool === undefined) throw new AppError("not_found", `MCP server ${parts.server} has no tool ${parts.tool}`);
    return { slot, tool };
  }

  private problemOf(slot: Slot): string {
    const first = slot.server.diagnostics().at(-1);
    return first === undefined ? "" : ` (${first})`;
  }

  private status(name: string, slot: Slot): McpServerStatus {
    const live = slot.server.live;
    const pid = live?.pid;
    const protocol = live?.protocolVersion;
    return {
      name,
      status: slot.server.state,
      tools: live?.tools.tools.size ?? 0,
      diagnostics: [...this.configDiagnostics(name), ...slot.server.diagnostics()],
      origin: slot.server.resolved.origin,
      ...(pid === undefined ? {} : { pid }),
      ...(live === undefined ? {} : { era: live.era, ...(protocol === undefined ? {} : { protocol }) }),
    };
  }

  private inactiveStatus(item: InactiveServer): McpServerStatus {
    return { name: item.name, status: item.status, tools: 0, diagnostics: this.configDiagnostics(item.name), origin: item.origin };
  }

  private configDiagnostics(name: string): string[] {
    return this.resolved.diagnostics.filter((item) => item.server === name).map((item) => item.message);
  }
}

function info(tool: McpTool): McpToolInfo {
  return { name: tool.name, server: tool.server, tool: tool.tool, description: tool.description };
}
