/**
 * Path facts the sandbox plan decides with: containment, and a resolver that reports every link it
 * followed, so the plan can tell a path the user laid out from one a kernel could have redirected.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, resolve, sep } from "node:path";

/** Links one resolution may follow before it counts as a loop (the kernel's own limit is 40). */
export const MAX_LINK_HOPS = 40;


/** The resolution of one path: its real location and the real directories of the links followed on the way. */
export interface Traced {
  readonly real: string;
  /** For each link followed: the real directory that holds it (whoever can write there chose where it points). */
  readonly linkParents: readonly string[];
}

/**
 * Resolves `path` like realpath(3), one component at a time, remembering where each followed link
 * sits. Returns undefined when the path does not resolve (missing, loop, unreadable).
 */
export function traceRealPath(path: string): Traced | undefined {
  if (!isAbsolute(path)) return undefined;
  const linkParents: string[] = [];
  let pending = normalize(path).split(sep).filter((part) => part.length > 0);
  let real: string = sep;
  let hops = 0;
  while (pending.length > 0) {
    const [part, ...rest] = pending as [string, ...string[]];
    pending = rest;
    if (part === ".") continue;
    if (part === "..") {
      real = dirname(real);
      continue;
    }
    const next = join(real, part);
    let target: string;
    try {
      if (!lstatSync(next).isSymbolicLink()) {
        real = next;
        continue;
      }
      target = readlinkSync(next);
    } catch {
      return undefined;
    }
    if ((hops += 1) > MAX_LINK_HOPS) return undefined;
    linkParents.push(real);
    pending = [...target.split(sep).filter((p) => p.length > 0), ...pending];
    if (isAbsolute(target)) real = sep;
  }
  return { real: resolve(real), linkParents };
}
