import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { chmod, rm } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseFileError, OperationsStore, retryWhileBusy } from "../operations/index.js";
import type { SandboxMode } from "../sandbox/index.js";
import { newToken } from "./auth.js";
import { ConnectionGuard } from "./connections.js";
import type { DaemonContext } from "./context.js";
import { buildRouter, httpHandler } from "./http.js";
import { McpEndpoint } from "./mcpEndpoint.js";
import { SessionRegistry, type RegistryOptions } from "./registry.js";
import type { SessionDirectory } from "./sessionPort.js";
import type { LogStats } from "./log.js";
import type { DaemonInfo } from "../api/index.js";
import { DAEMON_DB_FILE, makeStateDirPrivate, removeDaemonInfo, takeDaemonLock, writeDaemonInfo, writeToken } from "./state.js";
import { StreamServer } from "./stream.js";
import { warnOnFewDescriptors } from "./descriptors.js";
import { storeTurns } from "./turns.js";
import { SHUTDOWN_TIMEOUT_MS } from "./limits.js";
import { loadWebAssets } from "./webAssets.js";
import { WebEndpoint } from "./webEndpoint.js";
import { WebLogins } from "./webLogins.js";
import { currentProcess, installDir, isSqliteBusy, type Log } from "../platform/index.js";

/** Where, under the install, the web console's build lies (Vite writes it at install). */
const WEB_BUILD_DIR = join("dist", "web");

/** Where the daemon listens: a loopback host and port (0 = any free port), or a Unix socket path. */
export type ListenTarget = { readonly host: string; readonly port: number } | { readonly socket: string };

export interface DaemonOptions {
  readonly stateDir: string;
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly listen: ListenTarget;
  readonly install?: string;
  readonly log?: Log;
  readonly sandbox?: SandboxMode;
  /** Spare kernels (K-11); overrides the `kernel.pool` setting. */
  readonly pool?: number;
  /** Most sessions open at once; overrides the `daemon.max_sessions` setting. */
  readonly maxSessions?: number;
  /** What GET /health reports about the log (`albedo serve` owns it). */
  readonly logStats?: () => LogStats;
  /** The sessions the routes serve; by default a SessionRegistry of real kernels. Route tests pass a fake. */
  readonly sessions?: SessionDirectory;
  /** Check every answer against its route's schema (a mismatch is a 500 naming the field); for tests. */
  readonly checkReplies?: boolean;
  /** Where the web console's build is read from; by default WEB_BUILD_DIR under the install. */
  readonly webDir?: string;
  /** How long an MCP session on /mcp may idle before it is closed; overrides MCP_IDLE_TIMEOUT_MS (`albedo serve --mcp-idle`). */
  readonly mcpIdleMs?: number;
  /** Told of each answered HTTP request (`albedo serve --verbose`): method, path without the query (it may hold a token), status, milliseconds. */
  readonly onRequest?: (entry: RequestEntry) => void;
}

/** One answered request as `onRequest` sees it. */
export interface RequestEntry {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly ms: number;
}

/** What restart recovery found when the daemon opened its database (O-2): turns abandoned as running or queued, receipts pruned. */
export interface StartReport {
  readonly running: number;
  readonly queued: number;
  readonly pruned: number;
}

/** The running daemon (D-1): HTTP routes, the session streams, the sessions and the operations store. */
export class Daemon {
  private closing: Promise<void> | undefined;

  private constructor(
    readonly info: DaemonInfo,
    readonly recovery: StartReport,
    private readonly server: Server,
    private readonly streams: StreamServer,
    private readonly mcp: McpEndpoint | undefined,
    private readonly ctx: DaemonContext,
    private readonly options: DaemonOptions,
    private readonly releaseLock: () => Promise<void>,
  ) {}

  /**
   * Makes the state dir private, takes its daemon.lock, writes the token, opens the store
   * (recovering after a crash), listens, then writes daemon.json. Throws DaemonLockedError when
   * another live daemon owns the state dir, DatabaseFileError for an unusable albedo.db, or the
   * error when it cannot listen.
   */
  static async start(options: DaemonOptions): Promise<Daemon> {
    await makeStateDirPrivate(options.stateDir);
    const releaseLock = await takeDaemonLock(options.stateDir);
    try {
      return await Daemon.startLocked(options, releaseLock);
    } catch (error) {
      await releaseLock();
      throw error;
    }
  }

  private static async startLocked(options: DaemonOptions, releaseLock: () => Promise<void>): Promise<Daemon> {
    const token = newToken();
    await writeToken(options.stateDir, token);
    // A socket file left by a daemon that died is in the way; the lock says no live daemon owns it.
    if ("socket" in options.listen) await rm(options.listen.socket, { force: true });
    const { store, recovery } = await openStore(join(options.stateDir, DAEMON_DB_FILE));
    try {
      const turns = { store, env: options.env, ...(options.install ? { install: options.install } : {}) };
      const registry = options.sessions ?? (await realRegistry({
        stateDir: options.stateDir, home: options.home, env: options.env, ...optionalParts(options),
        turns: (session, publish) => storeTurns(session, publish, turns),
      }));
      const web = new WebLogins();
      const ctx: DaemonContext = { stateDir: options.stateDir, install: options.install, registry, store, logStats: options.logStats, web };
      const router = buildRouter(ctx);
      const page = new WebEndpoint(await loadWebAssets(options.webDir ?? join(installDir(), WEB_BUILD_DIR)));
      const auth = { token, web };
      const streams = new StreamServer(router, registry, auth, options.log);
      const handler = httpHandler(router, auth, { ...(options.log ? { log: options.log } : {}), checkReplies: options.checkReplies === true });
      // MCP clients reach sessions of real kernels only; a daemon with scripted sessions (route tests) has no /mcp.
      const mcp = registry instanceof SessionRegistry
        ? new McpEndpoint({ registry, token, ...(options.log ? { log: options.log } : {}), ...(options.mcpIdleMs !== undefined ? { idleMs: options.mcpIdleMs } : {}) })
        : undefined;
      const server = createServer((req, res) => {
        if (options.onRequest) reportRequest(req, res, options.onRequest);
        if (mcp !== undefined && McpEndpoint.owns(req.url)) void mcp.handle(req, res);
        else if (WebEndpoint.owns(req)) page.handle(req, res);
        else void handler(req, res);
      });
      server.on("upgrade", (req, socket, head) => streams.handleUpgrade(req, socket, head));
      new ConnectionGuard(auth, options.log).attach(server);
      const info = await listen(server, options.listen);
      await writeDaemonInfo(options.stateDir, info);
      return new Daemon(info, recovery, server, streams, mcp, ctx, options, releaseLock);
    } catch (error) {
      store.close();
      throw error;
    }
  }

  get url(): string {
    return this.info.url;
  }

  /** Sessions open or being opened. */
  get activeSessions(): number {
    return this.ctx.registry.active;
  }

  /** Stops listening, ends streams, closes sessions (each kernel through its ladder), closes the store, removes daemon.json and daemon.lock. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    await removeDaemonInfo(this.options.stateDir);
    this.streams.close();
    await this.mcp?.close();
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_TIMEOUT_MS).unref());
    await Promise.race([this.ctx.registry.closeAll(), deadline]);
    await stopped;
    this.ctx.store.close();
    if ("socket" in this.options.listen) await rm(this.options.listen.socket, { force: true });
    await this.releaseLock();
  }
}

/**
 * Opens albedo.db, then runs restart recovery (O-2) and pruning, each waiting out another
 * process's lock on the file for STORE_BUSY_WAIT_MS (opening migrates, which writes). Throws
 * DatabaseFileError naming the file when the lock is still held, or what OperationsStore.open throws.
 */
async function openStore(file: string): Promise<{ store: OperationsStore; recovery: StartReport }> {
  try {
    const store = await retryWhileBusy(() => OperationsStore.open(file));
    try {
      const found = await retryWhileBusy(() => store.recoverAfterRestart());
      return { store, recovery: { ...found, pruned: await retryWhileBusy(() => store.pruneExpired()) } };
    } catch (error) {
      store.close();
      throw error;
    }
  } catch (error) {
    if (!isSqliteBusy(error)) throw error;
    throw new DatabaseFileError(file, "locked", `is locked by another process (${(error as { code?: string }).code})`, "stop what holds it (an sqlite3 shell, a backup tool), then start again");
  }
}

/** The optional options a registry takes, without undefined keys. */
/** The registry of real kernels; warns first when the open-file limit cannot hold its sessions at their bounds. */
async function realRegistry(options: RegistryOptions): Promise<SessionRegistry> {
  const registry = new SessionRegistry(options);
  warnOnFewDescriptors(options.log, (await registry.sessionCap()).limit);
  return registry;
}

function optionalParts(options: DaemonOptions): { install?: string; log?: Log; sandbox?: SandboxMode; pool?: number; maxSessions?: number } {
  return {
    ...(options.install ? { install: options.install } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.pool !== undefined ? { pool: options.pool } : {}),
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
  };
}

/** Calls `report` once `res` is sent, with the path alone: a query may carry `?token=` (stream clients). */
function reportRequest(req: IncomingMessage, res: ServerResponse, report: (entry: RequestEntry) => void): void {
  const started = performance.now();
  res.once("finish", () => {
    const path = new URL(req.url ?? "/", "http://albedo.invalid").pathname;
    report({ method: req.method ?? "GET", path, status: res.statusCode, ms: Math.round(performance.now() - started) });
  });
}

/** Listens and returns what daemon.json should say. */
async function listen(server: Server, target: ListenTarget): Promise<DaemonInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if ("socket" in target) server.listen(target.socket, resolve);
    else server.listen(target.port, target.host, resolve);
  });
  if ("socket" in target) {
    await chmod(target.socket, 0o600);
    return { url: `http+unix://${encodeURIComponent(target.socket)}`, ...currentProcess(), socket: target.socket };
  }
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the server has no TCP address");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, ...currentProcess() };
}
