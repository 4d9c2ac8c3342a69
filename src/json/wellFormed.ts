/**
 * Text that is not well-formed UTF-16: a lone surrogate ("\ud800") that a model, a kernel or a
 * server wrote as a JSON escape. JavaScript strings hold it, but it has no UTF-8 form, and strict
 * JSON parsers refuse it once it is stored and served back. It is replaced by U+FFFD where text
 * enters, as the UTF-8 decoder already does for ill-formed bytes.
 */

/** The only way JSON text decoded from UTF-8 can yield a lone surrogate: a \uD800–\uDFFF escape (a valid pair matches too). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** JSON.parse(text), with every lone surrogate in its strings and keys replaced by U+FFFD; throws what JSON.parse throws. */
export function parseJsonWellFormed(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return SURROGATE_ESCAPE.test(text) ? wellFormedJson(value) : value;
}

/**
 * `value` (a parsed JSON value the caller owns) with every lone surrogate in its strings and keys
 * replaced by U+FFFD, changed in place; a string is returned replaced. Walks with an explicit
 * stack, so no depth overflows it, and into each object once (YAML aliases share and can cycle).
 */
export function wellFormedJson<T>(value: T): T {
  if (typeof value === "string") return value.toWellFormed() as T;
  const pending: object[] = [];
  const seen = new Set<object>();
  if (isContainer(value)) pending.push(value);
  while (pending.length > 0) {
    const node = pending.pop() as Record<string, unknown>;
    if (seen.has(node)) continue;
    seen.add(node);
    for (const key of Object.keys(node)) {
      const item = node[key];
      const fixed = typeof item === "string" && !item.isWellFormed() ? item.toWellFormed() : item;
      if (isContainer(item)) pending.push(item);
      if (key.isWellFormed()) {
        if (fixed !== item) node[key] = fixed;
        continue;
      }
      delete node[key];
      node[key.toWellFormed()] = fixed;
    }
  }
  return value;
}

/** Whether every string and key in `value` is well-formed UTF-16 (no lone surrogate). */
export function isWellFormedJson(value: unknown): boolean {
  const pending: unknown[] = [value];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string" && !item.isWellFormed()) return false;
    if (!isContainer(item) || seen.has(item)) continue;
    seen.add(item);
    for (const [key, child] of Object.entries(item)) {
      if (!key.isWellFormed()) return false;
      pending.push(child);
    }
  }
  return true;
}

/** An array or object to walk into; binary buffers (a kernel message's) hold no text. */
function isContainer(item: unknown): item is object {
  return typeof item === "object" && item !== null && !ArrayBuffer.isView(item) && !(item instanceof ArrayBuffer);
}
