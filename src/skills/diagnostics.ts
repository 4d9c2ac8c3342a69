import { MAX_DIAGNOSTICS } from "./limits.js";
import type { Diagnostic } from "./types.js";

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders diagnostics by (path, code, message) so equal trees give equal catalogs (S-7). */
export function sortDiagnostics(list: readonly Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => compare(a.path, b.path) || compare(a.code, b.code) || compare(a.message, b.message));
}

/**
 * Sorts and bounds a diagnostic list to MAX_DIAGNOSTICS entries; past the bound the last entry is one
 * `diagnostics_dropped` note (path `notePath`) saying how many were left out (S-6).
 */
export function boundDiagnostics(list: readonly Diagnostic[], notePath: string): Diagnostic[] {
  const sorted = sortDiagnostics(list);
  if (sorted.length <= MAX_DIAGNOSTICS) return sorted;
  const kept = sorted.slice(0, MAX_DIAGNOSTICS - 1);
  const dropped = sorted.length - kept.length;
  kept.push({
    severity: "warning",
    code: "diagnostics_dropped",
    path: notePath,
    message: `${dropped} more diagnostics not shown (MAX_DIAGNOSTICS = ${MAX_DIAGNOSTICS})`,
  });
  return kept;
}

/** Compares two strings by UTF-16 code units; the one order used for names and paths. */
export const compareText = compare;
