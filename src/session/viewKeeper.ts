import type { Settings } from "../settings/index.js";
import type { FullDiscovery, ParseCache } from "../skills/index.js";
import {
  buildView, readSelection, reloadResult, walkFiles, withSessionScope,
  type CatalogReload, type ExtensionState, type SelectionInputs, type SessionView, type ViewSource,
} from "./view.js";
import type { Disposable } from "../platform/index.js";
import type { CatalogWalk, SelectionChange, SessionCatalog } from "./port.js";

/** One walk of the files for the management catalog (D-3), with the view it is read against. */

/**
 * Builds what serves `view` (the route table) and returns the step that puts it in place. The
 * keeper runs that step in the same synchronous turn as it replaces its own reference (K-7).
 */
export type ServeView = (view: SessionView) => () => void;

/** One walk of the files (through the owner's parse cache) and one read of each settings file, side by side, into one view. */
export async function prepareView(source: ViewSource, extensions: ExtensionState, sessionSettings: Settings, parses: ParseCache): Promise<SessionView> {
  const [walk, selection] = await Promise.all([walkFiles(source, parses), readSelection(source, sessionSettings)]);
  return buildView(walk.snapshot, extensions, selection);
}

/**
 * A session's current view and all the work that replaces it — reload, settings refresh, walks
 * for the management catalog — on one chain, so no two of them interleave. Whether the session
 * needs a reload is derived from its last walk (D-2).
 */
export class ViewKeeper implements SessionCatalog {
  private chain: Promise<unknown> = Promise.resolve();
  /** The discovered revision the last walk gave; undefined while the open's walk is the only one. */
  private walkedRevision: string | undefined;
  private readonly listeners = new Set<(view: SessionView) => void>();

  constructor(
    private readonly source: ViewSource,
    private current: SessionView,
    private readonly serve: ServeView,
    /** The parses of unchanged SKILL.md files this session's walks share; each walk leaves only what it saw. */
    private readonly parses: ParseCache,
  ) {}

  get view(): SessionView {
    return this.current;
  }

  /** Whether the files, when last walked, differ from what the current view was discovered from. */
  get needsReload(): boolean {
    return this.walkedRevision !== undefined && this.walkedRevision !== this.current.discovered.revision;
  }

  /** Re-runs discovery and reads the settings, then swaps the view (K-7). */
  reload(): Promise<CatalogReload> {
    return this.serialize(async () => {
      const previous = this.current;
      const view = await prepareView(this.source, previous.extensions, previous.selection.scopes.session ?? {}, this.parses);
      this.walkedRevision = view.discovered.revision;
      this.swap(view);
      return reloadResult(previous, view);
    });
  }

  /** Rereads the settings files, each once; only when they changed, rebuilds the view and walks the files once (D-2). */
  refresh(): Promise<void> {
    return this.serialize(async () => {
      if (await this.rereadSelection()) await this.walkNow();
    });
  }

  /** Rereads the settings files once and walks the files once; then applies what `change` returns, from the same reads. */
  walk(change?: SelectionChange): Promise<CatalogWalk> {
    return this.serialize(async () => {
      await this.rereadSelection();
      const walk = await this.walkNow();
      const session = change?.(walk, this.current);
      if (session !== undefined) this.rebuild(withSessionScope(this.current.selection, session));
      return { walk, view: this.current };
    });
  }

  /** Calls `listener` after every swap; the handle removes it. */
  onChange(listener: (view: SessionView) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.chain.then(task);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Reads the settings files once; swaps in a view built from them when they changed. Returns whether they did. */
  private async rereadSelection(): Promise<boolean> {
    const current = this.current.selection;
    const selection = await readSelection(this.source, current.scopes.session ?? {});
    if (selection.settingsRevision === current.settingsRevision) return false;
    this.rebuild(selection);
    return true;
  }

  /** A view over the same discovery with another selection: enablement changes without a walk. */
  private rebuild(selection: SelectionInputs): void {
    this.swap(buildView(this.current.discovered, this.current.extensions, selection));
  }

  private async walkNow(): Promise<FullDiscovery> {
    const walk = await walkFiles(this.source, this.parses);
    this.walkedRevision = walk.snapshot.revision;
    return walk;
  }

  private swap(view: SessionView): void {
    const commit = this.serve(view);
    // No await between these two steps: no reader sees the new view without its routes, or the reverse.
    this.current = view;
    commit();
    for (const listener of [...this.listeners]) {
      try {
        listener(view);
      } catch {
        // A listener's failure must not fail a swap that has already happened.
      }
    }
  }
}
