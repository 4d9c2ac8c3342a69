/**
 * What a session's kernel can write, as one predicate: the one place every path the runtime hands
 * to a host process (an MCP server's command, arguments, working directory and search paths) is
 * checked. A kernel writes its workspace, its run dir, its checkpoint directory and its workspace's
 * package layer (every workspace's: any of them may be some kernel's); a file there, or a link
 * there on the way to a file elsewhere, may be the kernel's choice, so no host process runs it or
 * starts from it.
 */
import { isAbsolute, join, normalize, resolve } from "node:path";
import { within } from "../platform/index.js";
import { traceRealPath } from "./paths.js";
import { PACKAGES_DIR } from "./packageLayer.js";
import { CHECKPOINTS_DIR } from "./plan.js";

export interface KernelWritesPlaces {
  readonly workspace: string;
  /** The session's run dir (its sockets, its kernel's /tmp and home when sandboxed). */
  readonly runDir: string;
  /** The state dir: hidden from every sandbox even inside a workspace that holds it (the home), but for the run dir. */
  readonly stateDir: string;
}

export class KernelWrites {
  private readonly roots: readonly string[];
  private readonly runDirs: readonly string[];
  private readonly stateDirs: readonly string[];
  /** Every session's checkpoint directories and every workspace's package layers: each is written by a kernel. */
  private readonly kernelStateDirs: readonly string[];

  constructor(places: KernelWritesPlaces) {
    const both = (path: string): string[] => {
      const given = normalize(resolve(path));
      return [...new Set([given, traceRealPath(given)?.real ?? given])];
    };
    this.runDirs = both(places.runDir);
    this.roots = [...both(places.workspace), ...this.runDirs];
    this.stateDirs = both(places.stateDir);
    this.kernelStateDirs = this.stateDirs.flatMap((state) => [join(state, CHECKPOINTS_DIR), join(state, PACKAGES_DIR)]);
  }

  /**
   * Whether the kernel can write `path` or decide where it leads: the path as written, its real
   * location, or the directory of any link followed on the way lies in the workspace or the run
   * dir. A relative path is taken against `base`. A path that does not resolve counts by what it
   * says and by its nearest ancestor that does.
   */
  writes(path: string, base = process.cwd()): boolean {
    const absolute = normalize(isAbsolute(path) ? path : resolve(base, path));
    if (this.inside(absolute)) return true;
    const traced = traceRealPath(absolute) ?? tracedAncestor(absolute);
    if (traced === undefined) return false;
    return this.inside(traced.real) || traced.linkParents.some((parent) => this.inside(parent));
  }

  /** Why `path` may not be given to a host process as `what`, or undefined when it may. */
  refusal(path: string, what: string, base?: string): string | undefined {
    if (!this.writes(path, base)) return undefined;
    return `its ${what} ${path} lies where the session's kernel can write (the workspace, its run dir or a package layer), so the kernel could choose what runs on the host`;
  }

  private inside(path: string): boolean {
    if (this.stateDirs.some((state) => within(path, state))) return [...this.runDirs, ...this.kernelStateDirs].some((dir) => within(path, dir));
    return this.roots.some((root) => within(path, root));
  }
}

/** The trace of the nearest ancestor of `path` that resolves. */
function tracedAncestor(path: string): ReturnType<typeof traceRealPath> {
  let current = path;
  for (;;) {
    const parent = resolve(current, "..");
    if (parent === current) return undefined;
    current = parent;
    const traced = traceRealPath(current);
    if (traced !== undefined) return traced;
  }
}
