import { isUtf8 } from "node:buffer";
import { readdir } from "node:fs/promises";
import { escapeInvalidUtf8 } from "../text/index.js";
import { examineCandidate, undecodableCandidate, type Candidate } from "./candidate.js";
import { boundDiagnostics, compareText } from "./diagnostics.js";
import { fsProblem, probe } from "./files.js";
import { fileKind } from "../platform/index.js";
import { MAX_CANDIDATES } from "./limits.js";
import { ParseCache } from "./parseCache.js";
import { applyPrecedence } from "./precedence.js";
import { discoveryRoots, type DiscoveryOptions, type DiscoveryRoot } from "./roots.js";
import type { Diagnostic } from "./types.js";

/** Every candidate one discovery examined, with root-level and bound diagnostics (S-1, S-5, S-6, S-7). */
export interface CandidateDiscovery {
  readonly roots: readonly DiscoveryRoot[];
  /** In examination order: root by root, children sorted by name. Invalid and shadowed included. */
  readonly candidates: readonly Candidate[];
  /** Problems with the roots themselves and the `candidates_dropped` note; not tied to one candidate. */
  readonly diagnostics: readonly Diagnostic[];
}

/** Candidates examined concurrently; keeps open files and stat calls modest on small machines. */
const EXAMINE_BATCH = 16;

/** One child of a root; a name that is not valid UTF-8 is kept in its escaped form (escapeInvalidUtf8). */
interface Child {
  readonly name: string;
  readonly undecodable: boolean;
}

interface Listing {
  readonly root: DiscoveryRoot;
  readonly names: readonly Child[];
}

/** Byte of a leading dot, which hides a child from discovery. */
const DOT = 0x2e;

/**
 * Lists the candidate names of one root: children that are directories or links, dot-names skipped.
 * Names are read as bytes: decoded as strings, a name that is not UTF-8 would come back with
 * replacement characters and name a path that does not exist.
 */
async function listRoot(root: DiscoveryRoot): Promise<{ names: Child[]; problem?: Diagnostic }> {
  const found = await probe(root.path);
  if (found.kind === "missing") return { names: [] };
  const fail = (code: string, message: string) => ({ names: [], problem: { severity: "error" as const, path: root.path, code, message } });
  if (found.kind === "problem") return fail(found.problem.code, found.problem.message);
  if (!found.stats.isDirectory()) return fail("not_directory", `skill root ${root.path} is ${fileKind(found.stats)}`);
  try {
    const entries = await readdir(root.path, { withFileTypes: true, encoding: "buffer" });
    const names = entries
      .filter((e) => e.name[0] !== DOT && (e.isDirectory() || e.isSymbolicLink()))
      .map((e) => (isUtf8(e.name) ? { name: e.name.toString("utf8"), undecodable: false } : { name: escapeInvalidUtf8(e.name), undecodable: true }))
      .sort((a, b) => compareText(a.name, b.name));
    return { names };
  } catch (error) {
    const problem = fsProblem(error, root.path);
    return fail(problem.code, problem.message);
  }
}

/**
 * Examines every candidate under the S-1 roots, up to MAX_CANDIDATES; never throws for bad files.
 * Unchanged SKILL.md files are parsed once per `cache` (its owner's walks share it); afterwards the
 * cache holds only the files this walk saw.
 */
export async function discoverCandidates(options: DiscoveryOptions, cache = new ParseCache()): Promise<CandidateDiscovery> {
  const roots = discoveryRoots(options);
  const diagnostics: Diagnostic[] = [];
  const listings: Listing[] = [];
  for (const root of roots) {
    const { names, problem } = await listRoot(root);
    if (problem) diagnostics.push(problem);
    listings.push({ root, names });
  }
  const jobs: { root: DiscoveryRoot; child: Child }[] = [];
  let dropped = 0;
  let dropRoot: string | undefined;
  for (const { root, names } of listings) {
    for (const child of names) {
      if (jobs.length < MAX_CANDIDATES) jobs.push({ root, child });
      else {
        dropped++;
        dropRoot ??= root.path;
      }
    }
  }
  if (dropped > 0 && dropRoot !== undefined) {
    diagnostics.push({
      severity: "warning",
      code: "candidates_dropped",
      path: dropRoot,
      message: `${dropped} more candidates not examined (MAX_CANDIDATES = ${MAX_CANDIDATES})`,
    });
  }
  const parses = cache.walk();
  const examined: Candidate[] = [];
  for (let i = 0; i < jobs.length; i += EXAMINE_BATCH) {
    const batch = jobs.slice(i, i + EXAMINE_BATCH);
    examined.push(
      ...(await Promise.all(
        batch.map(({ root, child }) =>
          child.undecodable ? undecodableCandidate(root.path, child.name, root.scope, root.index) : examineCandidate(root.path, child.name, root.scope, root.index, parses),
        ),
      )),
    );
  }
  parses.finish();
  const candidates = applyPrecedence(examined).map((c) => ({ ...c, diagnostics: boundDiagnostics(c.diagnostics, c.source) }));
  return { roots, candidates, diagnostics };
}
