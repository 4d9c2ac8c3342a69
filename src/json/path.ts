/** A path into a JSON value as people read it: `skills.on[2]`, `kernel.pool`; "" for the value itself. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else text += text.length === 0 ? String(key) : `.${String(key)}`;
  }
  return text;
}
