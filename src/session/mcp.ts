/**
 * A session's MCP servers (M-1, M-2): resolved from the global and project settings and the
 * state dir's approvals, started beside the kernel, restarted by entry on `/reload session`,
 * closed with the session. A session without any configured server has none of this: no hub, no
 * `mcp.*` methods, no `mcp` namespace (absent, not empty) — until a reload finds one configured.
 */
import { McpApprovals, McpHub, mcpHostPlaces, resolveServers, secretVariables, type McpHostPlaces, type McpReloadChange, type ResolvedServers, type SharedServers } from "../mcp/index.js";
import { homeDir, stateDir, type Log } from "../platform/index.js";
import { detectSandbox, type SandboxMode } from "../sandbox/index.js";
import type { Settings } from "../settings/index.js";
import { join } from "node:path";
import { RUN_BASE_DIR } from "./runDirs.js";
import type { SessionView } from "./view.js";

export interface SessionMcpOptions {
  readonly workspace: string;
  readonly stateDir: string;
  readonly home: string;
  /** The session's run dir: its kernel writes there. */
  readonly runDir: string;
  /** The session's own sandbox mode, when it overrides the global setting. */
  readonly sandbox?: SandboxMode;
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
    private readonly places: McpHostPlaces,
    initial: ResolvedServers,
  ) {
    this.settling = hub.start(initial);
  }

  /** The servers of `view`, starting (not awaited), or undefined when the view configures none. */
  static async open(options: SessionMcpOptions, view: SessionView): Promise<SessionMcp | undefined> {
    if (!configuresMcp(view)) return undefined;
    const places = placesFor(options, view);
    const resolved = await resolveFor(options, places, view);
    const hub = new McpHub({ log: options.log, ...(options.shared ? { sharedPool: options.shared } : {}) });
    return new SessionMcp(hub, options, places, resolved);
  }

  /** Rereads the entries of `view`: only servers whose entry changed restart. Answers what changed once the starts have settled. */
  async reload(view: SessionView): Promise<McpReloadChange> {
    const resolved = await resolveFor(this.options, this.places, view);
    const change = this.hub.reload(resolved);
    this.settling = change.then(() => undefined);
    return await change;
  }

  /** The session's log. */
  get log(): Log {
    return this.options.log;
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

/**
 * What the session's kernel can write and where its servers start. Project servers get a sandbox
 * of their own whenever the kernel is sandboxed (the sandbox setting is the global file's, as for
 * the kernel); a kernel that is not could write anywhere the user can, and they run as it does.
 */
function placesFor(options: SessionMcpOptions, view: SessionView): McpHostPlaces {
  const mode = options.sandbox ?? view.selection.scopes.global?.sandbox ?? "auto";
  const sandboxed = mode !== "off" && detectSandbox(options.env).usable;
  return mcpHostPlaces({ workspace: options.workspace, stateDir: options.stateDir, home: options.home, runDir: options.runDir, sandboxed });
}

/**
 * The places a session opened here on `workspace` would judge its servers by, for the CLI's one-off
 * starts (`albedo mcp prompt`, doctor): every session's run dir counts as the kernel's.
 */
export function oneOffMcpPlaces(env: NodeJS.ProcessEnv, workspace: string, sandbox: SandboxMode | undefined): McpHostPlaces {
  const state = stateDir(env);
  const sandboxed = (sandbox ?? "auto") !== "off" && detectSandbox(env).usable;
  return mcpHostPlaces({ workspace, stateDir: state, home: homeDir(env), runDir: join(state, RUN_BASE_DIR), sandboxed });
}

async function resolveFor(options: SessionMcpOptions, places: McpHostPlaces, view: SessionView): Promise<ResolvedServers> {
  const { global, project } = view.selection.scopes;
  const approvals = await McpApprovals.load(options.stateDir, options.workspace);
  return resolveServers({
    ...places,
    ...(global?.mcp ? { global: global.mcp } : {}),
    ...(project?.mcp ? { project: project.mcp } : {}),
    workspace: options.workspace,
    approvals,
    env: options.env,
  });
}
