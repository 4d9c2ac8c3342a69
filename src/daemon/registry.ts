import { Session, type ExtensionState } from "../session/index.js";
import { DEFAULT_MCP_CLIENT_INFO, SharedServers } from "../mcp/index.js";
import type { SandboxMode } from "../sandbox/index.js";
import { LiveSession } from "./live.js";
import { WarmPool, type SpareStatus } from "./pool.js";
import { KERNEL_PID_POLL_MS, MAX_SESSIONS } from "./limits.js";
import { HttpProblem } from "./problem.js";
import type { OpenOptions, SessionDirectory, SessionTurns, StreamEvent } from "./sessionPort.js";
import type { SessionClient } from "../api/index.js";
import { globalSettingsTarget, readSettings } from "../settings/index.js";
import { isSameProcessAlive, type Log, processIdentity } from "../platform/index.js";

/** What every session of one daemon shares. */
export interface RegistryOptions {
  readonly stateDir: string;
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly install?: string;
  readonly log?: Log;
  /** `albedo serve --sandbox`: overrides the global sandbox setting for every session. */
  readonly sandbox?: SandboxMode;
  /** `albedo serve --pool`: overrides the `kernel.pool` setting (K-11). */
  readonly pool?: number;
  /** `albedo serve --max-sessions`: overrides the `daemon.max_sessions` setting. */
  readonly maxSessions?: number;
  /** Makes each open session's turn runner (O-3); without it sessions run no turns. */
  readonly turns?: (session: Session, publish: (event: StreamEvent) => void) => SessionTurns;
}

/** The daemon's open sessions, at most the session cap (counting ones still booting; see sessionCap). */
export class SessionRegistry implements SessionDirectory {
  private readonly sessions = new Map<string, LiveSession>();
  private opening = 0;
  private closing = false;
  private readonly pool: WarmPool;
  /** MCP servers whose entries say `"shared": true`: one per identical entry, for every session of the daemon. */
  private readonly mcpShared: SharedServers;

  constructor(private readonly options: RegistryOptions) {
    this.mcpShared = new SharedServers({ log: options.log ?? (() => undefined), clientInfo: DEFAULT_MCP_CLIENT_INFO });
    this.pool = new WarmPool({
      stateDir: options.stateDir,
      open: (workspace, extensions) => this.openSession(workspace, extensions, {}),
      ...(options.pool !== undefined ? { size: options.pool } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  }

  /**
   * Opens a session; with `how.join` it boots no kernel (external, K-13) or boots one that signs
   * with the relay's key (K-14), and closes once the join's process is gone. Throws 429
   * too_many_sessions at the bound, or the Session's own error when the kernel does not start.
   */
  async open(workspace: string, extensions: Partial<ExtensionState>, how: OpenOptions = {}): Promise<LiveSession> {
    const { join, remote } = how;
    if (this.closing) throw new HttpProblem("kernel_died", "the daemon is shutting down");
    const cap = await this.sessionCap();
    // Checked and counted in one step after the only await, so opens racing each other cannot pass the cap together.
    if (this.sessions.size + this.opening >= cap.limit) {
      throw new HttpProblem("too_many_sessions", `the daemon already holds ${this.sessions.size + this.opening} sessions; at most ${cap.limit} (${cap.from})`, {
        limit: cap.limit,
      });
    }
    this.opening += 1;
    try {
      const wanted: ExtensionState = { skills: extensions.skills ?? true };
      // A notebook's kernel (K-13, K-14: its key is fixed at boot), or one on a server named for this session only (K-12), has nothing to gain from a spare.
      // A resumed session loads its checkpoint at its kernel's first start: no spare has that.
      // A spare's egress was started from the global network setting: a session with its own boots for it.
      const spare = join === undefined && remote === undefined && how.resume === undefined && how.network === undefined ? await this.pool.take(workspace, wanted) : undefined;
      const session = spare ?? (await this.openSession(workspace, wanted, { ...how, ...(join ? { join } : {}) }));
      const live = await this.adopt(session, spare !== undefined, how.client ?? "api");
      this.sessions.set(session.id, live);
      if (join !== undefined) this.watchPid(live, join.pid);
      else if (remote === undefined) this.pool.refill(workspace, wanted);
      return live;
    } finally {
      this.opening -= 1;
    }
  }

  /** Wraps a booted session for the registry; on any failure (shutdown included) closes it before throwing, so no kernel outlives a failed open. */
  private async adopt(session: Session, warm: boolean, client: SessionClient): Promise<LiveSession> {
    try {
      if (this.closing) throw new HttpProblem("kernel_died", "the daemon is shutting down");
      return new LiveSession(session, { warm, client, ...(this.options.turns ? { turns: this.options.turns } : {}) });
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  /** The session cap now: `--max-sessions`, else the global `daemon.max_sessions` setting, else MAX_SESSIONS; and which of them it is. */
  async sessionCap(): Promise<{ limit: number; from: string }> {
    if (this.options.maxSessions !== undefined) return { limit: this.options.maxSessions, from: "--max-sessions" };
    try {
      const configured = (await readSettings(globalSettingsTarget(this.options.stateDir))).settings.daemon?.max_sessions;
      if (configured !== undefined) return { limit: configured, from: "daemon.max_sessions" };
    } catch {
      // A malformed settings file fails the open itself, with the file's problem.
    }
    return { limit: MAX_SESSIONS, from: "MAX_SESSIONS" };
  }

  /** The warm pool's spares (K-11), for GET /health. */
  spares(): SpareStatus[] {
    return this.pool.status();
  }

  private openSession(workspace: string, extensions: ExtensionState, how: Pick<OpenOptions, "join" | "remote" | "resume" | "network">): Promise<Session> {
    const { join, remote, resume, network } = how;
    return Session.open({
      workspace,
      home: this.options.home,
      stateDir: this.options.stateDir,
      env: this.options.env,
      mcpShared: this.mcpShared,
      extensions,
      ...(join?.kind === "external" ? { kernel: "external" as const } : {}),
      ...(join?.kind === "relay" ? { relayKey: join.key, ...(join.cwd !== undefined ? { kernelCwd: join.cwd } : {}) } : {}),
      ...(this.options.install ? { install: this.options.install } : {}),
      ...(this.options.log ? { log: this.options.log } : {}),
      ...(this.options.sandbox ? { sandbox: this.options.sandbox } : {}),
      ...(remote ? { remote } : {}),
      ...(resume !== undefined ? { resume } : {}),
      ...(network !== undefined ? { network } : {}),
    });
  }

  private watchPid(live: LiveSession, pid: number): void {
    // Its start time too: once the process is gone its pid may be given to another.
    const kernel = processIdentity(pid);
    const timer = setInterval(() => {
      if (!isSameProcessAlive(kernel) && this.sessions.get(live.id) === live) void this.close(live.id).catch(() => undefined);
    }, KERNEL_PID_POLL_MS);
    timer.unref();
    live.onClosed(() => clearInterval(timer));
  }

  /** The session with this id. Throws 404 session_not_found. */
  get(id: string): LiveSession {
    const live = this.sessions.get(id);
    if (live === undefined) throw new HttpProblem("session_not_found", `no session ${id} in this daemon`, { session_id: id });
    return live;
  }

  list(): LiveSession[] {
    return [...this.sessions.values()];
  }

  /** Sessions held plus sessions being opened: what an idle check must see as zero before a daemon started on demand exits. */
  get active(): number {
    return this.sessions.size + this.opening;
  }

  /** Closes one session. Throws 404 session_not_found. */
  async close(id: string): Promise<void> {
    const live = this.get(id);
    this.sessions.delete(id);
    await live.close();
  }

  /** Closes every session (kernel shutdown ladders run side by side); refuses new ones from now on. */
  async closeAll(): Promise<void> {
    this.closing = true;
    const all = this.list();
    this.sessions.clear();
    await Promise.allSettled([...all.map((live) => live.close()), this.pool.close()]);
    // Last: every session has released its shared servers by now; this stops any a failed close left.
    await this.mcpShared.close();
  }
}
