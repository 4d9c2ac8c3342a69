/** Layout for a terminal: the width text is laid out for, and tables and rows that keep to it. */
import { describe, expect, it } from "vitest";
import { hangingRow, MAX_TEXT_COLUMNS, MIN_TEXT_COLUMNS, table, TERMINAL_COLUMNS, textColumns } from "../../src/text/index.js";

describe("X textColumns", () => {
  it("takes a terminal's width within its bounds, and 80 columns when there is no terminal", () => {
    expect(textColumns(undefined)).toBe(TERMINAL_COLUMNS);
    expect(textColumns(0)).toBe(TERMINAL_COLUMNS);
    expect(textColumns(Number.NaN)).toBe(TERMINAL_COLUMNS);
    expect(textColumns(132)).toBe(132);
    expect(textColumns(120.7)).toBe(120);
    expect(textColumns(12)).toBe(MIN_TEXT_COLUMNS);
    expect(textColumns(1000)).toBe(MAX_TEXT_COLUMNS);
  });
});

describe("X table and hangingRow keep to the width they are given", () => {
  const description = "word ".repeat(60).trim();
  it.each([40, 80, 132, 200])("%i columns", (columns) => {
    const rows = table(["NAME", "DESCRIPTION"], [["alpha", description]], columns);
    for (const line of rows) expect(line.length).toBeLessThanOrEqual(columns);
    expect(rows[1]!.length).toBe(columns);
    for (const line of hangingRow("  /help  ", description, 24, columns)) expect(line.length).toBeLessThanOrEqual(columns);
  });
});
