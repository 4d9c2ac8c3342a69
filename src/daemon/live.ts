import type { Session } from "../session/index.js";
import type { SessionClient } from "../api/index.js";
import { NO_TURNS, type SessionTurns, type StreamEvent } from "./sessionPort.js";
import { Emitter, type Disposable } from "../platform/index.js";
import { DenialLines } from "../network/index.js";

/**
 * A session as the daemon holds it: the Session and the stream listeners its events fan out to
 * (D-2). Everything about the session's catalog (refresh, walks, reload, `needsReload`) is the
 * Session's own.
 */
export class LiveSession {
  // A broken socket throws here and is dropped by its own close handler; the others still hear.
  private readonly stream = new Emitter<StreamEvent>();
  private readonly watchers: Disposable[] = [];
  private readonly closeHooks = new Set<() => void>();

  /** The session's turns (O-3): run from the operations store, reported on this stream. */
  readonly turns: SessionTurns;
  /** Whether the session came from the warm pool (K-11) rather than a kernel booted for this open. */
  readonly warm: boolean;
  /** Who opened it. */
  readonly client: SessionClient;
  /** When it was handed to its client (milliseconds since the epoch); a spare's boot came earlier. */
  readonly openedAt = Date.now();

  constructor(
    readonly session: Session,
    options: { readonly warm?: boolean; readonly client?: SessionClient; readonly turns?: (session: Session, publish: (event: StreamEvent) => void) => SessionTurns } = {},
  ) {
    this.warm = options.warm ?? false;
    this.client = options.client ?? "api";
    this.turns = options.turns ? options.turns(session, (event) => this.publish(event)) : NO_TURNS;
    // An external kernel (K-13) is not the session's to watch; the registry watches its process instead.
    if (session.status().kernel !== "external") this.watchers.push(session.kernel.onStatus((event) => this.publishStatus(event.status, event.reason)));
    // A swapped catalog reaches stream clients whichever face swapped it: HTTP, a typed command or Python.
    this.watchers.push(session.catalog.onChange(() => this.publishStatus(session.status().kernel)));
    // A restore from the checkpoint (K-15) reaches stream clients with the kernel's resource.
    this.watchers.push(session.restores.observe(() => this.publishStatus(session.status().kernel)));
    // Each denial of its egress proxy reaches stream clients as it happens, its repeats counted (N-4).
    const egress = session.network.egress;
    if (egress !== undefined) {
      const denials = new DenialLines(egress, (notice) => this.publish({ type: "network", notice }));
      this.watchers.push({ dispose: () => denials.dispose() });
    }
  }

  get id(): string {
    return this.session.id;
  }

  /** Registers a stream listener; the handle removes it. */
  subscribe(listener: (event: StreamEvent) => void): Disposable {
    return this.stream.on(listener);
  }

  get subscribers(): number {
    return this.stream.size;
  }

  /** Sends an event to every stream listener; a failing listener never stops the others. */
  publish(event: StreamEvent): void {
    this.stream.fire(event);
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
      await this.turns.close();
      await this.session.close();
    } finally {
      for (const watcher of this.watchers.splice(0)) watcher.dispose();
      this.stream.clear();
      for (const hook of [...this.closeHooks]) hook();
      this.closeHooks.clear();
    }
  }
}
