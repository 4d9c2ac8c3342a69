/**
 * A session's MCP servers (M-1, M-2): resolved from the global and project settings and the
 * state dir's approvals, started beside the kernel, restarted by entry on `/reload session`,
 * closed with the session. A session without any configured server has none of this: no hub, no
 * `mcp.*` methods, no `mcp` namespace (absent, not empty) — until a reload finds one configured.
 */
import { McpApprovals, McpHub, resolveServers, secretVariables, type McpReloadChange, type ResolvedServers, type SharedServers } from "../mcp/index.js";
import type { Log } from "../platform/index.js";
import type { Settings } from "../settings/index.js";
import type { SessionView } from "./view.js";

export interface SessionMcpOptions {
  readonly workspace: string;
  readonly stateDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly log: Log;
  /** The daemon's pool of processes for entries marked `"shared": true`. */
  readonly shared?: SharedServers;
}

/** Whether any settings scope a session reads configures an MCP server. */
export function configuresMcp(view: SessionView): boolean {
  const { global, project } = view.selection.scopes;
  return Object.keys(global?.mcp?.servers ?? {}).length + Object.keys(project?.mcp?.servers ?? {}).length > 0;
}

/** The host variables the `from_env` references of the settings name: a kernel never inherits them. */
export function mcpSecretEnvNames(scopes: { readonly global?: Settings; readonly project?: Settings }): string[] {
  const entries = [scopes.global, scopes.project].flatMap((settings) => Object.values(settings?.mcp?.servers ?? {}));
  return [...new Set(entries.flatMap(secretVariables))];
}

export class SessionMcp {
  /** Settles when the last start or reload has settled every server (running, failed or stopped). */
  private settling: Promise<void>;

  private constructor(
    readonly hub: McpHub,
    private readonly options: SessionMcpOptions,
    initial: ResolvedServers,
  ) {
    this.settling = hub.start(initial);
  }

  /** The servers of `view`, starting (not awaited), or undefined when the view configures none. */
  static async open(options: SessionMcpOptions, view: SessionView): Promise<SessionMcp | undefined> {
    if (!configuresMcp(view)) return undefined;
    const resolved = await resolveFor(options, view);
    const hub = new McpHub({ log: options.log, ...(options.shared ? { sharedPool: options.shared } : {}) });
    return new SessionMcp(hub, options, resolved);
  }

  /** Rereads the entries of `view`: only servers whose entry changed restart. Answers what changed once the starts have settled. */
  async reload(view: SessionView): Promise<McpReloadChange> {
    const resolved = await resolveFor(this.options, view);
    const change = this.hub.reload(resolved);
    this.settling = change.then(() => undefined);
    return await change;
  }

  /** Settles when the last start or reload has settled every server; never rejects. */
  whenSettled(): Promise<void> {
    return this.settling;
  }

  /** The names of every server configured (running or not). */
  names(): string[] {
    return this.hub.servers().map((status) => status.name);
  }

  /** Waits for servers still starting, at most `waitMs`; never rejects. */
  async settled(waitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    try {
      await Promise.race([this.settling, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.hub.close();
  }
}

async function resolveFor(options: SessionMcpOptions, view: SessionView): Promise<ResolvedServers> {
  const { global, project } = view.selection.scopes;
  const approvals = await McpApprovals.load(options.stateDir, options.workspace);
  return resolveServers({
    ...(global?.mcp ? { global: global.mcp } : {}),
    ...(project?.mcp ? { project: project.mcp } : {}),
    workspace: options.workspace,
    approvals,
    env: options.env,
  });
}
