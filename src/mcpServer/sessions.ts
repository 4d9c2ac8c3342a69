/**
 * Where a served request finds its kernel session (P-1, P-5). A legacy connection, and a stdio
 * process in either era, has one session (ConnectionSessions); in the 2026-07-28 era over HTTP
 * there is no connection, so a session is named by a handle the first `python` call returns
 * (HandleTable), and a handle idle for the endpoint's idle time closes with its session.
 */
import { randomBytes } from "node:crypto";
import type { Disposable } from "../platform/index.js";
import { CellQueue } from "./cells.js";
import type { ServedSession } from "./host.js";

/** A kernel session as the server serves it: its handle, the session and its cells. */
export interface HandledSession {
  readonly handle: string;
  readonly session: ServedSession;
  readonly cells: CellQueue;
  /** Counts work in flight on the session (a running call, a task) until the returned function is called. */
  busy(): () => void;
}

/** A `session` argument that names no open session: answered as an isError result the model reads. */
export class HandleProblem extends Error {
  override readonly name = "HandleProblem";
}

/** How a server's requests find their session. */
export interface SessionSource {
  /** The session that lists (tools, prompts, resources) and the other tools are served from when no handle is given. */
  current(): Promise<HandledSession>;
  /** The session `handle` names, or, without one, the session a first call opens (`opened`). Throws HandleProblem. */
  forCall(handle: string | undefined): Promise<{ served: HandledSession; opened: boolean }>;
  /** Calls `listener` when the catalog of a session of this source changed (a reload): the server announces list changes. */
  onCatalogChange(listener: () => void): Disposable;
}

/** A fresh session handle: 128 random bits, which no request can guess. */
export function newHandle(): string {
  return `s-${randomBytes(16).toString("base64url")}`;
}

function unknownHandle(handle: string): HandleProblem {
  return new HandleProblem(`session "${handle.slice(0, 80)}" is unknown or closed (idle too long, or its kernel ended); call python without "session" to start a new session`);
}

/** A session whose work in flight is counted. */
class Counted implements HandledSession {
  readonly cells: CellQueue;
  private inFlight = 0;

  constructor(readonly handle: string, readonly session: ServedSession, private readonly idle: (now: boolean) => void = () => undefined) {
    this.cells = new CellQueue(session);
  }

  get working(): boolean {
    return this.inFlight > 0;
  }

  busy(): () => void {
    this.inFlight += 1;
    this.idle(false);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inFlight -= 1;
      if (this.inFlight === 0) this.idle(true);
    };
  }
}

/**
 * The one session of a connection (a legacy connection, or a stdio process in either era): opened
 * by its owner, perhaps after the client initialized (its workspace can come from the client's
 * roots), so every request waits for it. Its handle is optional in calls.
 */
export class ConnectionSessions implements SessionSource {
  private readonly ready: Promise<Counted>;
  private settle!: { resolve(served: Counted): void; reject(error: unknown): void };
  private readonly listeners = new Set<() => void>();
  private watching: Disposable | undefined;
  private opener: (() => void) | undefined;

  constructor() {
    this.ready = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // A client that never asks for anything must not see an unhandled rejection when the session fails.
    this.ready.catch(() => undefined);
  }

  /** Gives the connection its session; until then every request waits. */
  attach(session: ServedSession): void {
    this.watching = session.catalog.onChange(() => this.listeners.forEach((listener) => listener()));
    this.settle.resolve(new Counted(newHandle(), session));
  }

  /** The session could not open: every request answers with `error`. */
  fail(error: unknown): void {
    this.settle.reject(error);
  }

  /** Has `open` called (once) by the first request that needs the session, unless it was opened meanwhile. */
  openWhenAsked(open: () => void): void {
    this.opener = open;
  }

  private asked(): Promise<Counted> {
    const open = this.opener;
    this.opener = undefined;
    open?.();
    return this.ready;
  }

  /** Stops announcing reloads (the session is closed by its owner). */
  dispose(): void {
    this.watching?.dispose();
    this.listeners.clear();
  }

  current(): Promise<HandledSession> {
    return this.asked();
  }

  async forCall(handle: string | undefined): Promise<{ served: HandledSession; opened: boolean }> {
    const served = await this.asked();
    if (handle !== undefined && handle !== served.handle) throw unknownHandle(handle);
    return { served, opened: false };
  }

  onCatalogChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }
}

/** A session the handle table opened, and how it is closed. */
export interface OpenedSession {
  readonly session: ServedSession;
  /** Closes the session (its kernel with it). */
  close(): Promise<void>;
  /** Calls `listener` once when the session closed for another reason (REST, its kernel's end, shutdown). */
  onClosed(listener: () => void): void;
}

export interface HandleTableOptions {
  /** Opens a session on `workspace`. */
  open(workspace: string): Promise<OpenedSession>;
  /** A handle with nothing in flight for this long is closed with its session. */
  readonly idleMs: number;
  readonly log?: (message: string) => void;
}

class Entry extends Counted {
  timer: NodeJS.Timeout | undefined;
  constructor(handle: string, readonly workspace: string, readonly opened: OpenedSession, idle: (entry: Entry, now: boolean) => void) {
    super(handle, opened.session, (now) => idle(this, now));
  }
}

/**
 * The session handles of the 2026-07-28 era on one endpoint. Each handle names a session on the
 * workspace it was opened for, and only requests for that workspace find it. The lists a client
 * reads before its first call are served by a spare session per workspace, which the first
 * handle-less `python` call on that workspace takes as its own.
 */
export class HandleTable {
  private readonly entries = new Map<string, Entry>();
  private readonly spares = new Map<string, Promise<Entry>>();
  private readonly listeners = new Set<() => void>();
  private closing = false;

  constructor(private readonly options: HandleTableOptions) {}

  /** Sessions open now. */
  get size(): number {
    return this.entries.size;
  }

  /** The requests of `workspace` (from the endpoint's URL, checked by its owner) find their sessions here. */
  source(workspace: string): SessionSource {
    return {
      current: () => this.spare(workspace),
      forCall: async (handle) => {
        if (handle !== undefined) {
          const entry = this.entries.get(handle);
          if (entry === undefined || entry.workspace !== workspace) throw unknownHandle(handle);
          return { served: entry, opened: false };
        }
        const spare = this.spares.get(workspace);
        this.spares.delete(workspace);
        return { served: await (spare ?? this.open(workspace)), opened: true };
      },
      onCatalogChange: (listener) => this.onCatalogChange(listener),
    };
  }

  /** Calls `listener` when the catalog of any session of the table changed (a reload). */
  onCatalogChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /** Closes every session (the endpoint's end). */
  async close(): Promise<void> {
    this.closing = true;
    const all = [...this.entries.values()];
    this.entries.clear();
    this.spares.clear();
    await Promise.allSettled(all.map((entry) => this.end(entry, "the endpoint is closing", true)));
  }

  private spare(workspace: string): Promise<Entry> {
    let spare = this.spares.get(workspace);
    if (spare === undefined) {
      spare = this.open(workspace);
      this.spares.set(workspace, spare);
      // A spare that failed to open is not kept: the next request tries again.
      spare.catch(() => this.spares.get(workspace) === spare && this.spares.delete(workspace));
    }
    return spare;
  }

  private async open(workspace: string): Promise<Entry> {
    if (this.closing) throw new Error("the endpoint is closing");
    const opened = await this.options.open(workspace);
    const entry = new Entry(newHandle(), workspace, opened, (which, now) => this.idle(which, now));
    this.entries.set(entry.handle, entry);
    const watching = opened.session.catalog.onChange(() => this.listeners.forEach((listener) => listener()));
    opened.onClosed(() => {
      watching.dispose();
      this.forget(entry);
    });
    this.idle(entry, true);
    return entry;
  }

  private idle(entry: Entry, now: boolean): void {
    clearTimeout(entry.timer);
    if (!now || !this.entries.has(entry.handle)) return;
    entry.timer = setTimeout(() => void this.end(entry, `idle for ${Math.round(this.options.idleMs / 1000)} s`), this.options.idleMs);
    entry.timer.unref();
  }

  private forget(entry: Entry): void {
    clearTimeout(entry.timer);
    this.entries.delete(entry.handle);
    for (const [workspace, spare] of this.spares) void spare.then((held) => held === entry && this.spares.get(workspace) === spare && this.spares.delete(workspace), () => undefined);
  }

  private async end(entry: Entry, why: string, force = false): Promise<void> {
    if (entry.working && !force) return;
    this.forget(entry);
    this.options.log?.(`MCP session handle of session ${entry.session.id} closed: ${why}`);
    await entry.opened.close().catch((error: unknown) => this.options.log?.(`closing the session of an MCP handle: ${(error as Error).message}`));
  }
}
