/**
 * The filesystem view of one sandbox as an ordered list of bwrap mount arguments. On top of a
 * read-only copy of the whole system, paths are hidden (a small empty tmpfs), replaced by the
 * session's scratch dirs (/tmp and the home, on disk in the run dir), or bound back from a pinned
 * descriptor. Order decides what wins: a mount over an ancestor must come first, so mounts are
 * applied shallowest first; at the same path the rank below breaks the tie.
 */
import { lstatSync } from "node:fs";
import { isAbsolute, normalize, sep } from "node:path";
import type { SandboxPlan } from "./plan.js";

export type MountKind =
  /** An empty, small private tmpfs over the path (/run). Exposures at the same path win. */
  | "hide"
  /** The session's scratch dir bound over the path (/tmp, the home). Exposures at the same path win. */
  | "scratch"
  /** Bound back read-only from a pinned descriptor. */
  | "ro"
  /** Bound back writable from a pinned descriptor. */
  | "rw"
  /** A tmpfs that must win even over an exposure of the same path (the state dir). */
  | "hide-always";

export interface Mount {
  readonly kind: MountKind;
  /** Path inside the sandbox. */
  readonly dest: string;
  /** For ro/rw/scratch: the descriptor the child inherits (its index in the launch's fd list). */
  readonly slot?: number;
}

const RANK: Record<MountKind, number> = { hide: 0, scratch: 0, ro: 1, rw: 2, "hide-always": 3 };
/** Size of each hiding tmpfs, in bytes: enough for the mount points bwrap makes in it, too small to hoard memory. */
export const HIDE_TMPFS_BYTES = 1024 * 1024;

function depth(path: string): number {
  return path.split(sep).filter((part) => part.length > 0).length;
}

/** Sorts mounts so ancestors come first and same-path ties follow RANK; drops exact duplicates. */
export function orderMounts(mounts: readonly Mount[]): Mount[] {
  const seen = new Set<string>();
  const unique = mounts.filter((mount) => {
    const key = `${mount.kind}\0${mount.slot ?? ""}\0${mount.dest}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.sort((a, b) => depth(a.dest) - depth(b.dest) || RANK[a.kind] - RANK[b.kind] || a.dest.localeCompare(b.dest));
}

/**
 * The ordered mounts of a sandbox and the descriptors they bind, in slot order (slot numbers start
 * at `firstSlot`). Each pinned directory gets one slot per destination: bwrap closes a descriptor
 * once it has bound it. `hidden` paths get a small tmpfs when they exist; `hiddenAlways` too, and
 * it wins over an exposure of the same path.
 */
export function viewMounts(plan: SandboxPlan, hidden: readonly string[], hiddenAlways: readonly string[], firstSlot: number): { mounts: Mount[]; fds: number[] } {
  const fds: number[] = [];
  const mounts: Mount[] = [
    ...hidden.filter(exists).map((dest) => ({ kind: "hide" as const, dest: normalize(dest) })),
    ...hiddenAlways.filter(exists).map((dest) => ({ kind: "hide-always" as const, dest: normalize(dest) })),
  ];
  for (const pin of plan.pinned) {
    // A scratch dir replaces a host path, which must exist for bwrap to mount over it.
    for (const dest of pin.kind === "scratch" ? pin.dests.filter(exists) : pin.dests) {
      mounts.push({ kind: pin.kind, dest, slot: firstSlot + fds.length });
      fds.push(pin.fd);
    }
  }
  return { mounts: orderMounts(mounts), fds };
}

/** True when something (even a dangling link) exists at `path`: a tmpfs cannot be mounted on a missing path under the read-only root. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The bwrap arguments for ordered mounts: tmpfs for hides, binds from descriptor slots for the rest. */
export function mountArgs(mounts: readonly Mount[]): string[] {
  const args: string[] = [];
  for (const mount of mounts) {
    if (!isAbsolute(mount.dest) || mount.dest === sep) throw new Error(`sandbox mount path must be absolute and not /: ${mount.dest}`);
    if (mount.kind === "hide" || mount.kind === "hide-always") args.push("--size", String(HIDE_TMPFS_BYTES), "--tmpfs", mount.dest);
    else if (mount.kind === "ro") args.push("--ro-bind-fd", String(mount.slot), mount.dest);
    else args.push("--bind-fd", String(mount.slot), mount.dest);
  }
  return args;
}
