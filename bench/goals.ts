/**
 * A measure with a goal: its ratio (to its baseline, or to an absolute target) and the bound that
 * ratio must meet. Every goal in the bench output has this shape, which the chart reads.
 */
import { round } from "./stats.js";

export interface Goal {
  /** The measure over its baseline (or over its absolute target, for a goal in ms). */
  readonly ratio: number;
  /** The bound on `ratio`, as "<= N". */
  readonly target: string;
  readonly met: boolean;
}

/** `value / baseline` held to `ratio <= bound`. */
export function goal(value: number, baseline: number, bound: number): Goal {
  const ratio = round(value / baseline);
  return { ratio, target: `<= ${bound}`, met: ratio <= bound };
}

/** An absolute goal (`value <= limit`, e.g. in ms) as a ratio to the limit, held to `<= 1`. */
export function limitGoal(value: number, limit: number): Goal & { target_value: number } {
  return { ...goal(value, limit, 1), target_value: limit };
}

/** The bound of a `target` string; NaN when it is not one. */
export function targetBound(target: string): number {
  return Number(/^<=\s*([\d.]+)$/.exec(target)?.[1] ?? Number.NaN);
}

/** Every goal in a result tree, named by its dotted path. */
export function goalsIn(value: unknown, path = ""): { name: string; goal: Goal }[] {
  if (typeof value !== "object" || value === null) return [];
  const record = value as Record<string, unknown>;
  if (typeof record.ratio === "number" && typeof record.target === "string" && typeof record.met === "boolean") {
    return [{ name: path, goal: record as unknown as Goal }];
  }
  return Object.entries(record).flatMap(([key, child]) => goalsIn(child, path ? `${path}.${key}` : key));
}
