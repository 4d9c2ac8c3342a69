/**
 * The filesystem view of one sandbox as an ordered list of bwrap mount arguments. On top of a
 * read-only copy of the whole system, paths are hidden (empty tmpfs) or exposed (bound back,
 * read-only or writable). Order decides what wins: a mount over an ancestor must come first,
 * so mounts are applied shallowest first; at the same path the rank below breaks the tie.
 */
import { lstatSync, realpathSync } from "node:fs";
import { isAbsolute, normalize, sep } from "node:path";

export type MountKind =
  /** An empty private tmpfs over the path (home, /tmp, /run). Exposures at the same path win. */
  | "hide"
  /** Bound back read-only. */
  | "ro"
  /** Bound back writable. */
  | "rw"
  /** A tmpfs that must win even over an exposure of the same path (the state dir). */
  | "hide-always";

export interface Mount {
  readonly kind: MountKind;
  /** Host path the bind reads from (the resolved target); unused for tmpfs. */
  readonly source: string;
  /** Path inside the sandbox. */
  readonly dest: string;
}

const RANK: Record<MountKind, number> = { hide: 0, ro: 1, rw: 2, "hide-always": 3 };

/** The real path of `path`, or undefined when it does not resolve (a missing root is not an error). */
export function realPathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** True when something (even a dangling link) exists at `path`. */
export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Mounts that expose `path` with `kind`: at its real path, and at the path as given when a link made them differ. */
export function exposure(kind: "ro" | "rw", path: string): Mount[] {
  const real = realPathOrUndefined(path);
  if (real === undefined) return [];
  const given = normalize(path);
  const mounts: Mount[] = [{ kind, source: real, dest: real }];
  if (given !== real) mounts.push({ kind, source: real, dest: given });
  return mounts;
}

/** A tmpfs over `path` when it exists (a tmpfs cannot be mounted on a missing path under the read-only root). */
export function hiding(kind: "hide" | "hide-always", path: string): Mount[] {
  const dest = normalize(path);
  return dest !== sep && exists(dest) ? [{ kind, source: "", dest }] : [];
}

function depth(path: string): number {
  return path.split(sep).filter((part) => part.length > 0).length;
}

/** Sorts mounts so ancestors come first and same-path ties follow RANK; drops exact duplicates. */
export function orderMounts(mounts: readonly Mount[]): Mount[] {
  const seen = new Set<string>();
  const unique = mounts.filter((mount) => {
    const key = `${mount.kind}\0${mount.source}\0${mount.dest}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique.sort((a, b) => depth(a.dest) - depth(b.dest) || RANK[a.kind] - RANK[b.kind] || a.dest.localeCompare(b.dest));
}

/** The bwrap arguments for ordered mounts; binds of optional paths use the `-try` forms. */
export function mountArgs(mounts: readonly Mount[]): string[] {
  const args: string[] = [];
  for (const mount of mounts) {
    if (!isAbsolute(mount.dest)) throw new Error(`sandbox mount path must be absolute: ${mount.dest}`);
    if (mount.kind === "hide" || mount.kind === "hide-always") args.push("--tmpfs", mount.dest);
    else if (mount.kind === "ro") args.push("--ro-bind-try", mount.source, mount.dest);
    else args.push("--bind", mount.source, mount.dest);
  }
  return args;
}
