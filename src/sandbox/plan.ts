/**
 * What one sandbox exposes (K-10), decided once per session and pinned. Each directory bound into
 * the sandbox is resolved here, judged by where it really is and by who could have laid the links
 * that lead there, then opened and held by descriptor; bwrap binds the descriptor. A link, rename
 * or replacement the kernel plants later (it can write the workspace) therefore changes nothing a
 * restart mounts, and a link in the workspace never exposes anything outside the workspace.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readlinkSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { within, type FileIdentity } from "../platform/index.js";
import { PACKAGES_DIR } from "./packageLayer.js";
import { traceRealPath, type Traced } from "./paths.js";
import { protectedEntries, removeUnused } from "./protectedEntries.js";

/** Where the host hides or pins things a sandbox must never expose, whatever a link says. */
export interface SandboxPlaces {
  readonly workspace: string;
  /** The session's own run dir; the only place under the state dir a kernel may write. Its parent holds every session's run dir. */
  readonly runDir: string;
  readonly stateDir: string;
  readonly home: string;
  /**
   * The session's own checkpoint directory (K-15), under the state dir's CHECKPOINTS_DIR: bound
   * read-write at its real path, into this session's sandbox only. Absent when checkpoints are off.
   */
  readonly checkpointDir?: string;
  /**
   * The workspace's package layer (N-5), in the state dir's PACKAGES_DIR: bound at its real path,
   * read-write, or read-only once it is over its quota. Absent for an unsandboxed kernel.
   */
  readonly packageLayer?: { readonly dir: string; readonly kind: "ro" | "rw" };
}

/** The state dir's directory of sessions' checkpoints; each session's kernel writes the `kernel` directory of its own. */
export const CHECKPOINTS_DIR = "checkpoints";

/** One directory the plan is asked to expose. */
export interface ExposureRequest {
  readonly path: string;
  readonly kind: "ro" | "rw";
  /** What it is, for the note when it is refused ("workspace skill root", "skill demo", "Python install"). */
  readonly what: string;
  /** Set for a user skill root and the skills under it: the root's path as the user laid it out. */
  readonly userRoot?: string;
  /**
   * Bind only at the real path, not also at the path as given. For a skill directory: a link to it
   * sits in a root that is bound already, and resolves inside the sandbox by itself.
   */
  readonly atRealPathOnly?: boolean;
}

/** A directory held open for the session's life and bound, from its descriptor, at each destination. */
export interface PinnedDir {
  /** "scratch": a private writable dir in the run dir bound over a hidden path (/tmp, the home). */
  readonly kind: "ro" | "rw" | "scratch";
  readonly fd: number;
  /** Where the descriptor pointed when it was opened: the real path. */
  readonly real: string;
  readonly dev: bigint;
  readonly ino: bigint;
  /** Paths inside the sandbox: the real path, and the path as given when a link made them differ. */
  readonly dests: readonly string[];
}

/** Why a requested path is not exposed; the runtime may still serve skills there over RPC. */
export interface PlanNote {
  readonly path: string;
  readonly message: string;
}

/** Scratch dirs made in the run dir: the kernel's /tmp and home, on disk rather than in memory. */
export const SCRATCH_DIRS = { tmp: "tmp", home: "home" } as const;
/** System paths whose host content the sandbox replaces: /tmp by a scratch dir, /run by an empty tmpfs. */
export const REPLACED_SYSTEM_PATHS: readonly string[] = ["/tmp", "/run"];
/** Host pseudo-filesystems: never bound from the host (the sandbox has its own /proc and /dev). */
const PSEUDO_FILESYSTEMS: readonly string[] = ["/proc", "/sys", "/dev"];

/** The pinned exposures of one session. */
export class SandboxPlan {
  private closed = false;

  private constructor(
    readonly places: SandboxPlaces,
    readonly pinned: readonly PinnedDir[],
    readonly notes: readonly PlanNote[],
    /** Protected entries this plan made, or took on from an earlier plan of this process: removed at close when nothing else uses them. */
    private readonly created: readonly FileIdentity[],
  ) {}

  /**
   * Judges and pins every request. The workspace is bound writable (a kernel's) with its protected
   * entries read-only, or read-only whole (`workspace: "ro"`, an MCP server's); the run dir
   * writable. Throws when the workspace or run dir cannot be pinned or lies where no sandbox may
   * expose it (inside the state dir).
   */
  static make(places: SandboxPlaces, requests: readonly ExposureRequest[], workspaceKind: "ro" | "rw" = "rw"): SandboxPlan {
    const notes: PlanNote[] = [];
    const pinned: PinnedDir[] = [];
    const created: FileIdentity[] = [];
    const resolved = resolvePlaces(places);
    try {
      const workspace = pinRequired("workspace", resolved.workspace, workspaceKind, (real) => workspaceRefusal(real, resolved));
      // The workspace path the user gave (a link they laid out) works inside too.
      pinned.push({ ...workspace, dests: [...new Set([workspace.real, normalize(places.workspace)])] });
      pinned.push(pinRequired("run dir", resolved.runDir, "rw", () => undefined));
      if (resolved.checkpointDir !== undefined) {
        const base = join(resolved.stateDir, CHECKPOINTS_DIR);
        const outside = (real: string) => (dirname(dirname(real)) === base ? undefined : `it does not lie in ${base}`);
        pinned.push(pinRequired("checkpoint dir", resolved.checkpointDir, "rw", outside));
      }
      if (resolved.packageLayer !== undefined) {
        const base = join(resolved.stateDir, PACKAGES_DIR);
        const outside = (real: string) => (dirname(real) === base ? undefined : `it does not lie in ${base}`);
        pinned.push(pinRequired("package layer", resolved.packageLayer.dir, resolved.packageLayer.kind, outside));
      }
      pinned.push(...scratchDirs(places, resolved));
      const guarded = workspaceKind === "rw" ? protectedEntries(resolved, notes, created) : [];
      for (const request of [...guarded, ...requests]) {
        const pin = pinRequest(request, resolved, notes, pinned);
        if (pin !== undefined) pinned.push(pin);
      }
    } catch (error) {
      for (const pin of pinned) closeSync(pin.fd);
      removeUnused(created);
      throw error;
    }
    return new SandboxPlan(resolved, pinned, notes, created);
  }

  /** What the plan exposes beyond the session's own run dir, as one string: equal keys mean an equal sandbox (the warm pool compares them). */
  key(): string {
    const own = [this.places.runDir, ...(this.places.checkpointDir !== undefined ? [this.places.checkpointDir] : [])];
    const shared = this.pinned.filter((pin) => !own.some((dir) => within(pin.real, dir)));
    // A protected entry albedo made is an empty directory like any other it would make: which one is no difference.
    const made = (pin: PinnedDir) => this.created.some((entry) => entry.dev === pin.dev && entry.ino === pin.ino);
    return JSON.stringify(shared.map((pin) => (made(pin) ? [pin.kind, pin.dests, "made"] : [pin.kind, pin.dests, String(pin.dev), String(pin.ino)])));
  }

  /** Real paths a kernel of this plan can see from the host, for the guard on runtime-served reads. */
  exposedPaths(): string[] {
    return this.pinned.filter((pin) => pin.kind !== "scratch").map((pin) => pin.real);
  }

  /** Closes every pinned descriptor, then removes the protected entries it made that are still empty and used by no other plan. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const pin of this.pinned) closeSync(pin.fd);
    removeUnused(this.created);
  }
}

/** The places as real paths (the run dir must exist; the others may be missing). */
function resolvePlaces(places: SandboxPlaces): SandboxPlaces {
  const real = (path: string) => traceRealPath(path)?.real ?? normalize(path);
  const resolved = { workspace: real(places.workspace), runDir: real(places.runDir), stateDir: real(places.stateDir), home: real(places.home) };
  return {
    ...resolved,
    ...(places.checkpointDir !== undefined ? { checkpointDir: real(places.checkpointDir) } : {}),
    ...(places.packageLayer !== undefined ? { packageLayer: { ...places.packageLayer, dir: real(places.packageLayer.dir) } } : {}),
  };
}

/** The kernel's private /tmp and home: dirs in the run dir, bound over the host's (at the home's given and real path). */
function scratchDirs(given: SandboxPlaces, resolved: SandboxPlaces): PinnedDir[] {
  const targets = [["/tmp"], [...new Set([normalize(given.home), resolved.home])]] as const;
  return [SCRATCH_DIRS.tmp, SCRATCH_DIRS.home].map((name, i) => {
    const dir = join(resolved.runDir, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return { ...pinRequired(`scratch dir`, dir, "scratch", () => undefined), dests: targets[i]! };
  });
}

function workspaceRefusal(real: string, places: SandboxPlaces): string | undefined {
  if (within(real, places.stateDir)) return `it lies inside the state dir ${places.stateDir}, which no sandbox may expose`;
  if (PSEUDO_FILESYSTEMS.some((base) => within(real, base))) return "it lies in a pseudo-filesystem";
  return undefined;
}

function pinRequired(what: string, path: string, kind: PinnedDir["kind"], refusal: (real: string) => string | undefined): PinnedDir {
  const opened = openPinned(path);
  if (typeof opened === "string") throw new Error(`sandbox ${what} ${path} cannot be pinned: ${opened}`);
  const why = refusal(opened.real);
  if (why !== undefined) {
    closeSync(opened.fd);
    throw new Error(`sandbox ${what} ${path} cannot be exposed: ${why}`);
  }
  return { kind, ...opened, dests: [opened.real] };
}

/** Judges one request; returns its pin, or records a note and returns undefined (also when an earlier read-only pin covers it). */
function pinRequest(request: ExposureRequest, places: SandboxPlaces, notes: PlanNote[], earlier: readonly PinnedDir[]): PinnedDir | undefined {
  const traced = traceRealPath(request.path);
  if (traced === undefined) return undefined;
  const given = normalize(request.path);
  const kernelWritable = isKernelWritable(given, traced, places);
  // A link on the visible system resolves inside the sandbox by itself; one in a place the sandbox
  // replaces (the home, /tmp) is gone there, so the path as given needs its own mount. A link the
  // kernel could rewrite never gets one.
  const replaced = [places.home, places.stateDir, ...REPLACED_SYSTEM_PATHS].some((place) => within(given, place));
  const dests = given !== traced.real && replaced && !kernelWritable && request.atRealPathOnly !== true ? [traced.real, given] : [traced.real];
  const refusal = refusalOf(traced.real, dests, request, kernelWritable, places);
  if (refusal !== undefined) {
    notes.push({ path: request.path, message: `${request.what} not exposed in the sandbox: ${refusal}` });
    return undefined;
  }
  const covered = earlier.some((pin) => pin.kind === request.kind && pin.dests.includes(pin.real) && within(traced.real, pin.real));
  if (covered && dests.length === 1) return undefined;
  const opened = openPinned(traced.real);
  if (typeof opened === "string") {
    notes.push({ path: request.path, message: `${request.what} not exposed in the sandbox: ${opened}` });
    return undefined;
  }
  return { kind: request.kind, ...opened, dests };
}

/** True when the kernel could have decided where `given` leads: it lies in, or passed a link in, a place the kernel writes. */
function isKernelWritable(given: string, traced: Traced, places: SandboxPlaces): boolean {
  const writable = [places.workspace, places.runDir];
  return writable.some((place) => within(given, place) || traced.linkParents.some((parent) => within(parent, place)));
}

/** Why `real` may not be exposed at `dests`, or undefined when it may. */
function refusalOf(real: string, dests: readonly string[], request: ExposureRequest, kernelWritable: boolean, places: SandboxPlaces): string | undefined {
  const runBase = dirname(places.runDir);
  if (PSEUDO_FILESYSTEMS.some((base) => within(real, base))) return `it resolves into a host pseudo-filesystem (${real})`;
  if (within(real, runBase)) return `it resolves among the sessions' run dirs (${real})`;
  if (kernelWritable && !within(real, places.workspace)) {
    return `a link the kernel can rewrite leads outside the workspace (to ${real}); the runtime serves these skills itself`;
  }
  const hidden = [["state dir", places.stateDir], ["home directory", places.home]] as const;
  for (const [name, place] of hidden) if (real === place) return `it resolves to the ${name} itself`;
  for (const [name, place] of hidden) {
    // An ancestor bound at its own path leaves the deeper hide on top; bound anywhere else it would show the hidden place.
    if (within(place, real) && dests.some((dest) => dest !== real)) return `it contains the ${name} (${real})`;
  }
  if (within(real, places.stateDir) && !(request.userRoot !== undefined && within(real, normalize(request.userRoot)))) {
    return `it resolves into the state dir (${real})`;
  }
  if (dests.some((dest) => dest !== real && [places.stateDir, places.home, runBase].some((place) => within(place, dest)))) {
    return "its path would cover a hidden place";
  }
  return undefined;
}

/**
 * Opens `path` without following a final link and checks where the descriptor landed, so a swap
 * between resolving and opening cannot pin something else. Returns a reason when it cannot.
 */
function openPinned(path: string): { fd: number; real: string; dev: bigint; ino: bigint } | string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return `it cannot be opened (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  try {
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    const info = fstatSync(fd, { bigint: true });
    if (real !== path) throw new Error(`it moved while being pinned (now ${real})`);
    if (!info.isDirectory() && !info.isFile()) throw new Error("it is neither a directory nor a regular file");
    return { fd, real, dev: info.dev, ino: info.ino };
  } catch (error) {
    closeSync(fd);
    return (error as Error).message;
  }
}

/** The key a plan for these places and requests would have now (see SandboxPlan.key); pins nothing for longer than the call. */
export function planKey(places: SandboxPlaces, requests: readonly ExposureRequest[]): string {
  const plan = SandboxPlan.make(places, requests);
  try {
    return plan.key();
  } finally {
    plan.close();
  }
}
