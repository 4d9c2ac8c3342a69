/**
 * The warm kernel pool (K-11): sessions booted ahead of need, so that opening a session for a
 * workspace the daemon has seen is a reload (tens of milliseconds) instead of a kernel boot.
 *
 * A spare is a whole Session (kernel, RPC channel, sandbox) for one workspace and extension set:
 * the sandbox binds the workspace and the kernel runs in it, so a kernel cannot be started before
 * its workspace is known. After each open the pool boots a spare for that workspace; when it is
 * full the oldest spare is closed to make room. Taking a spare reloads it, so it serves the files
 * and settings as they are at the open, not as they were when it booted; a spare whose sandbox or
 * launch would now be built differently (settings changed, a new skill root or linked skill) is
 * closed instead of used.
 */
import type { ExtensionState, Session } from "../session/index.js";
import { globalSettingsTarget, readSettings } from "../settings/index.js";
import type { Log } from "../platform/index.js";

/** Spares kept when the global settings name no `kernel.pool` (K-11: one while the daemon runs). */
export const DEFAULT_KERNEL_POOL = 1;

/** What GET /health reports of one spare. */
export interface SpareStatus {
  readonly workspace: string;
  readonly skills: boolean;
  readonly state: "booting" | "ready";
  readonly pid: number | null;
}

export interface WarmPoolOptions {
  readonly stateDir: string;
  /** Opens a session the way the registry would for this workspace and extensions. */
  readonly open: (workspace: string, extensions: ExtensionState) => Promise<Session>;
  /** `albedo serve --pool N`: replaces the `kernel.pool` setting for this daemon. */
  readonly size?: number;
  readonly log?: Log;
}

interface Spare {
  readonly key: string;
  readonly workspace: string;
  readonly extensions: ExtensionState;
  /** The booting session; resolves undefined when the boot failed (already logged). */
  readonly booted: Promise<Session | undefined>;
  session: Session | undefined;
  /** The session's sandboxKey() when it booted. */
  bootKey: string | undefined;
}

/** Kernel states in which a spare can be handed out (a dead or restarting one is closed instead). */
const USABLE_KERNEL_STATES: ReadonlySet<string> = new Set(["ready", "idle", "busy"]);

export class WarmPool {
  /** Oldest first; at most the pool size (itself at most MAX_KERNEL_POOL). */
  private readonly spares: Spare[] = [];
  private refilling: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: WarmPoolOptions) {}

  /** The pool size now: `--pool`, else the global `kernel.pool` setting, else DEFAULT_KERNEL_POOL. */
  async size(): Promise<number> {
    if (this.options.size !== undefined) return this.options.size;
    try {
      const { settings } = await readSettings(globalSettingsTarget(this.options.stateDir));
      return settings.kernel?.pool ?? DEFAULT_KERNEL_POOL;
    } catch {
      // A malformed settings file: session opens report it; the pool just stays empty.
      return 0;
    }
  }

  /**
   * Takes the spare for this workspace and extension set, reloaded so it reflects the files and
   * settings of now; undefined when there is none or it cannot be used (it is closed then). A spare
   * still booting is waited for: it started before this request did.
   */
  async take(workspace: string, extensions: ExtensionState): Promise<Session | undefined> {
    const index = this.spares.findIndex((spare) => spare.key === keyOf(workspace, extensions));
    if (index < 0) return undefined;
    const [spare] = this.spares.splice(index, 1);
    const session = await spare!.booted;
    if (session === undefined) return undefined;
    if (!USABLE_KERNEL_STATES.has(session.status().kernel)) {
      this.log("warn", `pool: dropped the spare kernel for ${workspace}: it is ${session.status().kernel}`);
      await session.close();
      return undefined;
    }
    try {
      await session.reload();
      if (session.sandboxKey() === spare!.bootKey) return session;
      this.log("info", `pool: dropped the spare kernel for ${workspace}: settings or skill locations changed since it booted`);
      await session.close();
      return undefined;
    } catch (error) {
      this.log("warn", `pool: dropped the spare kernel for ${workspace}: reload failed (${String(error)})`);
      await session.close();
      return undefined;
    }
  }

  /**
   * Boots a spare for this workspace and extension set in the background, unless one is there;
   * closes the oldest spares to stay within the size. Refills run one at a time. Never throws.
   */
  refill(workspace: string, extensions: ExtensionState): void {
    this.refilling = this.refilling
      .then(() => this.refillNow(workspace, extensions))
      .catch((error: unknown) => this.log("warn", `pool: refill failed: ${String(error)}`));
  }

  /** The spares, oldest first. */
  status(): SpareStatus[] {
    return this.spares.map((spare) => ({
      workspace: spare.workspace,
      skills: spare.extensions.skills,
      state: spare.session === undefined ? "booting" : "ready",
      pid: spare.session?.status().pid ?? null,
    }));
  }

  /** Closes every spare (booting ones once they are up) and refuses refills from now on. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.spares.splice(0).map(closeSpare));
  }

  private async refillNow(workspace: string, extensions: ExtensionState): Promise<void> {
    const key = keyOf(workspace, extensions);
    const size = this.closed ? 0 : await this.size();
    if (size > 0 && this.spares.some((spare) => spare.key === key)) return;
    const room = Math.max(0, size - 1);
    while (this.spares.length > room) await closeSpare(this.spares.shift()!);
    if (size === 0 || this.closed) return;
    const spare: Spare = {
      key,
      workspace,
      extensions,
      session: undefined,
      bootKey: undefined,
      booted: this.boot(workspace, extensions).then(
        ({ session, bootKey }) => {
          spare.session = session;
          spare.bootKey = bootKey;
          return session;
        },
        (error: unknown) => {
          this.log("warn", `pool: could not boot a spare kernel for ${workspace}: ${String(error)}`);
          return undefined;
        },
      ),
    };
    this.spares.push(spare);
    // Waiting here keeps boots one at a time, so refills never pile kernels onto a busy machine.
    const session = await spare.booted;
    if (session === undefined) this.remove(spare);
    else if (this.closed) await session.close();
  }

  /** Opens a spare with its sandbox key; a spare that fails after its kernel booted is closed before the error goes on. */
  private async boot(workspace: string, extensions: ExtensionState): Promise<{ session: Session; bootKey: string }> {
    const session = await this.options.open(workspace, extensions);
    try {
      return { session, bootKey: session.sandboxKey() };
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  private remove(spare: Spare): void {
    const index = this.spares.indexOf(spare);
    if (index >= 0) this.spares.splice(index, 1);
  }

  private log(level: "info" | "warn", message: string): void {
    if (this.options.log) this.options.log(level, message);
    else if (level === "warn") process.stderr.write(`albedo ${level}: ${message}\n`);
  }
}

function keyOf(workspace: string, extensions: ExtensionState): string {
  return JSON.stringify([workspace, extensions.skills]);
}

async function closeSpare(spare: Spare): Promise<void> {
  const session = await spare.booted;
  await session?.close();
}
