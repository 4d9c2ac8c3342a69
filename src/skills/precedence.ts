import type { Candidate } from "./candidate.js";

/**
 * Marks losers among valid candidates of the same name (S-7): the first in examination order wins
 * (workspace, then user, then builtin; earlier root first). A loser in the winner's own scope also
 * gets a `collision` warning; across scopes the replacement is silent. Input order is kept.
 */
export function applyPrecedence(candidates: readonly Candidate[]): Candidate[] {
  const winners = new Map<string, Candidate>();
  return candidates.map((candidate) => {
    if (candidate.status !== "valid" || candidate.name === undefined) return candidate;
    const winner = winners.get(candidate.name);
    if (winner === undefined) {
      winners.set(candidate.name, candidate);
      return candidate;
    }
    const collision =
      winner.scope === candidate.scope
        ? [
            {
              severity: "warning" as const,
              code: "collision",
              path: candidate.source,
              message: `skill "${candidate.name}" is also defined at ${winner.source}, which takes precedence; this copy is ignored`,
            },
          ]
        : [];
    return { ...candidate, status: "shadowed", shadowedBy: winner.source, diagnostics: [...candidate.diagnostics, ...collision] };
  });
}
