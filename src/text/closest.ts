/** Close names offered when a name is unknown ("did you mean …"). */
export const MAX_SUGGESTIONS = 3;
/** Edit distance within which another name counts as close. */
export const SUGGESTION_DISTANCE = 2;

/** Names within SUGGESTION_DISTANCE edits of `wanted`, or containing it (or contained in it), closest first. */
export function closeNames(wanted: string, names: readonly string[]): string[] {
  return [...new Set(names)]
    .map((name) => ({ name, distance: name.includes(wanted) || wanted.includes(name) ? 0 : editDistance(wanted, name) }))
    .filter((c) => c.distance <= SUGGESTION_DISTANCE && wanted.length > 0 && c.name.length > 0)
    .sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : 1))
    .slice(0, MAX_SUGGESTIONS)
    .map((c) => c.name);
}

/** "; did you mean a, b?" for the close names of `wanted`, or `otherwise` when none is close. */
export function didYouMean(wanted: string, names: readonly string[], otherwise = ""): string {
  const close = closeNames(wanted, names);
  return close.length > 0 ? `; did you mean ${close.join(", ")}?` : otherwise;
}

/** Levenshtein distance, one row at a time. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
