import { readdir } from "node:fs/promises";
import { examineCandidate, type Candidate } from "./candidate.js";
import { boundDiagnostics, compareText } from "./diagnostics.js";
import { fileKind, fsProblem, probe } from "./files.js";
import { MAX_CANDIDATES } from "./limits.js";
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

interface Listing {
  readonly root: DiscoveryRoot;
  readonly names: readonly string[];
}

/** Lists the candidate names of one root: children that are directories or links, dot-names skipped. */
async function listRoot(root: DiscoveryRoot): Promise<{ names: string[]; problem?: Diagnostic }> {
  const found = await probe(root.path);
  if (found.kind === "missing") return { names: [] };
  const fail = (code: string, message: string) => ({ names: [], problem: { severity: "error" as const, path: root.path, code, message } });
  if (found.kind === "problem") return fail(found.problem.code, found.problem.message);
  if (!found.stats.isDirectory()) return fail("not_directory", `skill root ${root.path} is ${fileKind(found.stats)}`);
  try {
    const entries = await readdir(root.path, { withFileTypes: true });
    const names = entries
      .filter((e) => !e.name.startsWith(".") && (e.isDirectory() || e.isSymbolicLink()))
      .map((e) => e.name)
      .sort(compareText);
    return { names };
  } catch (error) {
    const problem = fsProblem(error, root.path);
    return fail(problem.code, problem.message);
  }
}

/** Examines every candidate under the S-1 roots, up to MAX_CANDIDATES; never throws for bad files. */
export async function discoverCandidates(options: DiscoveryOptions): Promise<CandidateDiscovery> {
  const roots = discoveryRoots(options);
  const diagnostics: Diagnostic[] = [];
  const listings: Listing[] = [];
  for (const root of roots) {
    const { names, problem } = await listRoot(root);
    if (problem) diagnostics.push(problem);
    listings.push({ root, names });
  }
  const jobs: { root: DiscoveryRoot; name: string }[] = [];
  let dropped = 0;
  let dropRoot: string | undefined;
  for (const { root, names } of listings) {
    for (const name of names) {
      if (jobs.length < MAX_CANDIDATES) jobs.push({ root, name });
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
  const examined: Candidate[] = [];
  for (let i = 0; i < jobs.length; i += EXAMINE_BATCH) {
    const batch = jobs.slice(i, i + EXAMINE_BATCH);
    examined.push(...(await Promise.all(batch.map(({ root, name }) => examineCandidate(root.path, name, root.scope, root.index)))));
  }
  const candidates = applyPrecedence(examined).map((c) => ({ ...c, diagnostics: boundDiagnostics(c.diagnostics, c.source) }));
  return { roots, candidates, diagnostics };
}
