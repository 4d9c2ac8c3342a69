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

/**
 * Returns how deeply arrays and objects nest in JSON text, read without parsing it (brackets
 * inside strings do not count), or `limit + 1` as soon as it passes `limit`. For text that may
 * not parse at all, or that should not be built into a value before its depth is known.
 */
export function jsonTextNestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === BACKSLASH) i += 1;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) inString = true;
    else if (char === OPEN_BRACKET || char === OPEN_BRACE) {
      depth += 1;
      if (depth > limit) return depth;
      deepest = Math.max(deepest, depth);
    } else if (char === CLOSE_BRACKET || char === CLOSE_BRACE) depth = Math.max(0, depth - 1);
  }
  return deepest;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
