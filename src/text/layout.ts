/** Columns the CLI lays text out for: the classic terminal width, which every help row and table fits. */
export const TERMINAL_COLUMNS = 80;
/** Characters a revision hash is shortened to where a person reads it (as `git` shortens commits). */
export const SHORT_REVISION_CHARS = 12;
/** The narrowest and widest layout a terminal's width is taken for: below it nothing reads, above it lines get too long to follow. */
export const MIN_TEXT_COLUMNS = 40;
export const MAX_TEXT_COLUMNS = 200;

/**
 * The width to lay text out for on a terminal reporting `columns` (a TTY's `columns`): that
 * width within MIN_TEXT_COLUMNS..MAX_TEXT_COLUMNS, TERMINAL_COLUMNS when there is no terminal.
 */
export function textColumns(columns: number | undefined): number {
  if (columns === undefined || !Number.isFinite(columns) || columns <= 0) return TERMINAL_COLUMNS;
  return Math.min(MAX_TEXT_COLUMNS, Math.max(MIN_TEXT_COLUMNS, Math.floor(columns)));
}

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

/** The narrowest text column a hanging row keeps beside its left column. */
const MIN_HANGING_TEXT = 20;
/** Where the text goes when the terminal is too narrow for both columns: under `left`, this far in. */
const NARROW_INDENT = 4;

/**
 * A two-column row: `left` padded to `leftWidth`, then `right` wrapped to the rest of `width`,
 * continuation lines indented under it. A `left` too long for its column gets the text on the
 * next line; so does every row on a terminal too narrow for both columns, indented NARROW_INDENT.
 */
export function hangingRow(left: string, right: string, leftWidth: number, width = TERMINAL_COLUMNS): string[] {
  if (width - leftWidth < MIN_HANGING_TEXT) {
    const pad = " ".repeat(NARROW_INDENT);
    return [left.trimEnd(), ...wrap(right, Math.max(1, width - NARROW_INDENT)).map((line) => pad + line)];
  }
  const body = wrap(right, width - leftWidth);
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
