import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { canonicalJson, deepFreeze } from "../json/index.js";
import type { Candidate } from "./candidate.js";
import { boundDiagnostics, compareText } from "./diagnostics.js";
import { discoverCandidates, type CandidateDiscovery } from "./discovery.js";
import { discoverInstructions } from "./instructions.js";
import type { ParseCache } from "./parseCache.js";
import type { DiscoveryOptions } from "./roots.js";
import type { CatalogSnapshot, Diagnostic, SkillEntry } from "./types.js";

function entryOf(candidate: Candidate): SkillEntry {
  return {
    name: candidate.name!,
    description: candidate.description!,
    source: candidate.source,
    scope: candidate.scope,
    dir: candidate.dir,
    resolvedDir: candidate.resolvedDir!,
    resolvedSource: candidate.resolvedSource!,
    dirIdentity: candidate.dirIdentity!,
    sourceIdentity: candidate.sourceIdentity!,
    size: candidate.size!,
    optional: candidate.optional ?? {},
  };
}

/** What a candidate contributes to the session catalog's diagnostics (S-7: silent cross-scope shadowing). */
function catalogDiagnostics(candidate: Candidate): readonly Diagnostic[] {
  if (candidate.status !== "shadowed") return candidate.diagnostics;
  return candidate.diagnostics.filter((d) => d.code === "collision");
}

/** Runs one discovery of skills and instruction files into a deep-frozen snapshot (S-9). Never throws for bad files. */
export async function discoverCatalog(options: DiscoveryOptions, cache?: ParseCache): Promise<CatalogSnapshot> {
  return (await discoverEverything(options, cache)).snapshot;
}

/** What one walk found: every candidate and instruction file (for the management catalog, D-3) and the snapshot they give. */
export interface FullDiscovery {
  readonly snapshot: CatalogSnapshot;
  readonly found: CandidateDiscovery;
  readonly instructions: Awaited<ReturnType<typeof discoverInstructions>>;
}

/** One walk of the skill roots and instruction files, kept whole; never throws for bad files. `cache` is the walk owner's (discoverCandidates). */
export async function discoverEverything(options: DiscoveryOptions, cache?: ParseCache): Promise<FullDiscovery> {
  const workspace = resolve(options.workspace);
  const home = resolve(options.home);
  const [found, instructions] = await Promise.all([discoverCandidates(options, cache), discoverInstructions(workspace, home)]);
  const skills = found.candidates
    .filter((c) => c.status === "valid")
    .map(entryOf)
    .sort((a, b) => compareText(a.name, b.name));
  const diagnostics = boundDiagnostics(
    [...found.diagnostics, ...found.candidates.flatMap(catalogDiagnostics), ...instructions.diagnostics],
    workspace,
  );
  const snapshot = sealSnapshot({ workspace, home, skills, diagnostics, instructions: instructions.files });
  return { snapshot, found, instructions };
}

function sealSnapshot(body: Omit<CatalogSnapshot, "revision">): CatalogSnapshot {
  const revision = createHash("sha256").update(canonicalJson(body)).digest("hex");
  return deepFreeze({ revision, ...body });
}

/**
 * A new snapshot holding only the skills `keep` accepts (enablement, K-8), with its own revision.
 * Filtering after precedence means a disabled winner never exposes a shadowed duplicate (D-3).
 */
export function selectSkills(snapshot: CatalogSnapshot, keep: (entry: SkillEntry) => boolean, options: { instructions: boolean } = { instructions: true }): CatalogSnapshot {
  const { revision: _revision, ...body } = snapshot;
  return sealSnapshot({ ...body, skills: body.skills.filter(keep), instructions: options.instructions ? body.instructions : [] });
}

/** Each snapshot's skills by name, made on the first lookup: snapshots never change. */
const skillsByName = new WeakMap<CatalogSnapshot, ReadonlyMap<string, SkillEntry>>();

/** The skill of that name in the snapshot (name compared after NFKC), or undefined. */
export function findSkill(snapshot: CatalogSnapshot, name: string): SkillEntry | undefined {
  let byName = skillsByName.get(snapshot);
  if (byName === undefined) {
    const map = new Map<string, SkillEntry>();
    for (const skill of snapshot.skills) if (!map.has(skill.name)) map.set(skill.name, skill);
    byName = map;
    skillsByName.set(snapshot, byName);
  }
  // Entry names are NFKC already, and NFKC leaves its own output unchanged: a name found as given
  // is the one its normal form would find, so only a miss pays for normalizing.
  return byName.get(name) ?? byName.get(name.normalize("NFKC"));
}
