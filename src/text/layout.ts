/** Columns the CLI lays text out for: the classic terminal width, which every help row and table fits. */
export const TERMINAL_COLUMNS = 80;
/** Characters a revision hash is shortened to where a person reads it (as `git` shortens commits). */
export const SHORT_REVISION_CHARS = 12;

/** Splits `text` into lines of at most `width` characters at spaces; a word longer than `width` is cut. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    for (let rest = word; rest.length > 0; ) {
      const candidate = line === "" ? rest : `${line} ${rest}`;
      if (candidate.length <= width) {
        line = candidate;
        rest = "";
      } else if (line !== "") {
        lines.push(line);
        line = "";
      } else {
        lines.push(rest.slice(0, width));
        rest = rest.slice(width);
      }
    }
  }
  if (line !== "" || lines.length === 0) lines.push(line);
  return lines;
}

/**
 * A two-column row: `left` padded to `leftWidth`, then `right` wrapped to the rest of `width`,
 * continuation lines indented under it. A `left` too long for its column gets the text on the next line.
 */
export function hangingRow(left: string, right: string, leftWidth: number, width = TERMINAL_COLUMNS): string[] {
  const textWidth = Math.max(20, width - leftWidth);
  const body = wrap(right, textWidth);
  const pad = " ".repeat(leftWidth);
  if (left.length >= leftWidth) return [left.trimEnd(), ...body.map((line) => pad + line)];
  return body.map((line, i) => (i === 0 ? left.padEnd(leftWidth) : pad) + line);
}

/** One line of at most `width` characters: whitespace folded, an ellipsis where it was cut. */
export function cut(text: string, width: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= width ? line : `${line.slice(0, Math.max(0, width - 1))}…`;
}

/** A revision as a person reads it: its first SHORT_REVISION_CHARS characters. */
export function shortRevision(revision: string): string {
  return revision.slice(0, SHORT_REVISION_CHARS);
}

/**
 * A table whose columns are as wide as their widest cell, two spaces apart, the last column cut
 * so that every line fits `width`. Rows are cells already made visible (no control characters).
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[], width = TERMINAL_COLUMNS): string[] {
  const all = [header, ...rows];
  const last = header.length - 1;
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
  const fixed = widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0);
  const room = Math.max(10, width - fixed);
  return all.map((row) => row.map((cell, i) => (i === last ? cut(cell, room) : cell.padEnd(widths[i]!))).join("  ").trimEnd());
}
