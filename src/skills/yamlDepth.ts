import { CST, Parser } from "yaml";

/**
 * Returns the deepest collection nesting in `yamlText`, or `limit + 1` as soon as it passes `limit`.
 * Walks the CST with an explicit stack: the yaml composer recurses once per level, and a few
 * thousand levels exhaust the stack in a way V8 may turn into a fatal out-of-memory abort.
 */
export function yamlNestingDepth(yamlText: string, limit: number): number {
  const pending: Array<[CST.Token, number]> = [];
  for (const token of new Parser().parse(yamlText)) pending.push([token, 0]);
  let deepest = 0;
  while (pending.length > 0) {
    const [token, depth] = pending.pop()!;
    if (token.type === "document") {
      if (token.value !== undefined) pending.push([token.value, depth]);
    } else if (CST.isCollection(token)) {
      const inner = depth + 1;
      if (inner > limit) return inner;
      deepest = Math.max(deepest, inner);
      for (const item of token.items) {
        if (item.key) pending.push([item.key, inner]);
        if (item.value) pending.push([item.value, inner]);
      }
    }
  }
  return deepest;
}
