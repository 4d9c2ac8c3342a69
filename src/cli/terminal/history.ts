/**
 * The console's input history, kept across runs in the state dir as readline keeps it in memory:
 * one entry per line, oldest first in the file, bounded in lines and bytes.
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../platform/index.js";

/** The history file in the state dir. */
export const HISTORY_FILE = "console_history";
/** Entries kept (readline's own bound too). */
export const MAX_HISTORY_LINES = 1_000;
/** Bytes of history read; a larger file is read from its end. */
export const MAX_HISTORY_BYTES = 256 * 1024;

/** The saved entries, most recent first (readline's order); none when there is no file or it cannot be read. */
export async function loadHistory(stateDir: string): Promise<string[]> {
  const bytes = await readFile(join(stateDir, HISTORY_FILE)).catch(() => undefined);
  if (bytes === undefined) return [];
  const text = bytes.subarray(Math.max(0, bytes.length - MAX_HISTORY_BYTES)).toString("utf8");
  return text.split("\n").filter((line) => line.trim() !== "").slice(-MAX_HISTORY_LINES).reverse();
}

/** Writes `history` (most recent first) to the state dir, private to the user: typed code can hold secrets. */
export async function saveHistory(stateDir: string, history: readonly string[]): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const lines = history.slice(0, MAX_HISTORY_LINES).filter((line) => !line.includes("\n")).reverse();
  await writeFileAtomic(join(stateDir, HISTORY_FILE), lines.length === 0 ? "" : `${lines.join("\n")}\n`);
}
