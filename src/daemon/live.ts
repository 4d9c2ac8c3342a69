import { readSelection, type Session } from "../session/index.js";
import { discoverCatalog } from "../skills/index.js";
import type { Disposable } from "../kernel/index.js";

/** One event on a session's stream (D-2). */
export type StreamEvent =
  | { readonly type: "output"; readonly execution_id: string; readonly msg_type: string; readonly content: unknown }
  | { readonly type: "status"; readonly kernel: string; readonly reason?: string; readonly revision: string }
  | { readonly type: "transcript"; readonly turn: Readonly<Record<string, unknown>> };

/**
 * A session as the daemon holds it: the Session, the stream listeners, and what the last walk of
 * the skill files found (D-2). Changes to the session's selection run one at a time.
 */
export class LiveSession {
  /** The discovered revision the last walk of the files found; undefined before the first walk. */
  private walkedRevision: string | undefined;
  private readonly listeners = new Set<(event: StreamEvent) => void>();
  private readonly watchers: Disposable[] = [];
  private readonly closeHooks = new Set<() => void>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly session: Session,
    readonly stateDir: string,
    readonly install: string | undefined,
    /** Whether the session came from the warm pool (K-11) rather than a kernel booted for this open. */
    readonly warm = false,
  ) {
    // An external kernel (K-13) is not the session's to watch; the registry watches its process instead.
    if (session.status().kernel !== "external") this.watchers.push(session.kernel.onStatus((event) => this.publishStatus(event.status, event.reason)));
  }

  get id(): string {
    return this.session.id;
  }

  get workspace(): string {
    return this.session.view.discovered.workspace;
  }

  /**
   * Whether the last walk found files that differ from what the session discovered. Derived on
   * every read, so a reload from any path (HTTP, typed command, Python) clears it.
   */
  get needsReload(): boolean {
    return this.walkedRevision !== undefined && this.walkedRevision !== this.session.view.discovered.revision;
  }

  /** Runs `task` after every earlier serialized task of this session; returns its result. */
  serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.chain.then(task);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Rereads the settings files (cheap) and, only when they changed, rebuilds the session's view and
   * walks the skill files again (D-2). Throws SettingsFileError for a malformed file.
   */
  refreshSelection(): Promise<void> {
    return this.serialize(async () => {
      const view = this.session.view;
      const selection = await readSelection(this.stateDir, this.workspace, view.selection.scopes.session ?? {});
      if (selection.settingsRevision === view.selection.settingsRevision) return;
      await this.session.updateSelection();
      await this.walk();
      this.publishStatus(this.session.status().kernel);
    });
  }

  /** Walks skill and instruction files and records the revision they give. */
  async walk(): Promise<void> {
    const discovered = this.session.view.discovered;
    const fresh = await discoverCatalog({ workspace: discovered.workspace, home: discovered.home, ...(this.install ? { install: this.install } : {}) });
    this.recordWalk(fresh.revision);
  }

  /** Records what a walk made elsewhere (the management catalog's) found. */
  recordWalk(discoveredRevision: string): void {
    this.walkedRevision = discoveredRevision;
  }

  /** Registers a stream listener; the handle removes it. */
  subscribe(listener: (event: StreamEvent) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  /** Sends an event to every stream listener; a failing listener never stops the others. */
  publish(event: StreamEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A broken socket is dropped by its own close handler.
      }
    }
  }

  publishStatus(kernel: string, reason?: string): void {
    this.publish({ type: "status", kernel, ...(reason ? { reason } : {}), revision: this.session.view.snapshot.revision });
  }

  /** Calls `hook` once the session is closed (streams end their sockets there). */
  onClosed(hook: () => void): Disposable {
    this.closeHooks.add(hook);
    return { dispose: () => this.closeHooks.delete(hook) };
  }

  /** Closes the session (kernel shutdown ladder; status events still flow), then ends every stream. */
  async close(): Promise<void> {
    try {
      await this.session.close();
    } finally {
      for (const watcher of this.watchers.splice(0)) watcher.dispose();
      this.listeners.clear();
      for (const hook of [...this.closeHooks]) hook();
      this.closeHooks.clear();
    }
  }
}
