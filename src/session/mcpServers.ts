import { NO_MCP_CHANGE, type McpReloadChange, type McpServerStatus } from "../mcp/index.js";
import { configuresMcp, SessionMcp, type SessionMcpOptions } from "./mcp.js";
import { mcpTurnFace, type McpCallObserver, type McpTurnFace } from "./mcpMethods.js";
import type { SessionMcpServers } from "./port.js";
import type { SessionView } from "./view.js";

/** What the session does when its servers change: serve their `mcp.*` routes, tell the kernel of servers it has no object for. */
export interface McpServersHost {
  /** Swaps in the routes of the current view, now with the `mcp.*` methods of the servers just started. */
  serveRoutes(): void;
  /** Tells the kernel which servers the session has now (MCP_RELOADED_NOTIFICATION). */
  announce(names: readonly string[]): void;
  /** Whether the session is closing: a first start that lost the race is closed again. */
  readonly closing: boolean;
}

/**
 * A session's MCP servers (M-2..M-4) as one member: the running set (absent while none is
 * configured), the observers every call is told to, and each reload's MCP step, one at a time —
 * two reloads must not both start a session's first servers.
 */
export class McpServers implements SessionMcpServers {
  private readonly observers = new Set<McpCallObserver>();
  private reloads: Promise<unknown> = Promise.resolve();

  private constructor(private readonly options: SessionMcpOptions, private running: SessionMcp | undefined) {}

  /** The servers `view` configures, starting (not awaited); none when it configures none. */
  static async open(options: SessionMcpOptions, view: SessionView): Promise<McpServers> {
    return new McpServers(options, await SessionMcp.open(options, view));
  }

  /** The running set, for the `mcp.*` routes; undefined while none is configured. */
  get current(): { readonly servers: SessionMcp; readonly observers: ReadonlySet<McpCallObserver> } | undefined {
    return this.running && { servers: this.running, observers: this.observers };
  }

  servers(): readonly McpServerStatus[] {
    return this.running?.hub.servers() ?? [];
  }

  forTurns(): McpTurnFace | undefined {
    return this.running && mcpTurnFace(this.running, this.observers);
  }

  /** The MCP step of a reload to `view`, after the reloads before it: restarts by entry, or starts the session's first servers. */
  reload(view: SessionView, host: McpServersHost): Promise<McpReloadChange> {
    const step = this.reloads.then(() => this.reloadNow(view, host));
    this.reloads = step.catch(() => undefined);
    return step;
  }

  private async reloadNow(view: SessionView, host: McpServersHost): Promise<McpReloadChange> {
    if (this.running !== undefined) {
      const change = await this.running.reload(view);
      if (change.added.length > 0) host.announce(this.running.names());
      return change;
    }
    if (host.closing || !configuresMcp(view)) return NO_MCP_CHANGE;
    const first = await SessionMcp.open(this.options, view);
    if (first === undefined) return NO_MCP_CHANGE;
    await first.whenSettled();
    if (host.closing) {
      await first.close();
      return NO_MCP_CHANGE;
    }
    this.running = first;
    host.serveRoutes();
    host.announce(first.names());
    return { ...NO_MCP_CHANGE, added: first.names() };
  }

  async close(): Promise<void> {
    await this.running?.close();
  }
}
