/**
 * Returns how deeply arrays and objects nest in a parsed JSON value (a scalar is 0, `[]` is 1), or
 * `limit + 1` as soon as it passes `limit`. Walks with an explicit stack: JSON.parse builds any depth
 * its input has, but JSON.stringify, structuredClone and canonicalJson recurse once per level and
 * overflow the call stack a few thousand levels down, so a value must be measured before they see it.
 */
export function jsonNestingDepth(value: unknown, limit: number): number {
  const pending: Array<[unknown, number]> = [[value, 0]];
  let deepest = 0;
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== "object" || item === null) continue;
    const inner = depth + 1;
    if (inner > limit) return inner;
    deepest = Math.max(deepest, inner);
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, inner]);
  }
  return deepest;
}
