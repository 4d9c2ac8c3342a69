import type { z } from "zod";
import { jsonPath } from "./path.js";

/** One thing wrong with a JSON value: where (`skills.on[2]`, "" for the value itself) and why. */
export interface JsonProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * The problems of a zod parse, one per offending path in the order zod met them: a stray key is a
 * problem at its own path (`kernel.pools`), and a field that breaks several rules at once is
 * reported once, by the first.
 */
export function problemsOfIssues(issues: readonly z.core.$ZodIssue[]): JsonProblem[] {
  const problems = new Map<string, JsonProblem>();
  for (const issue of issues) {
    const paths = issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...issue.path, key]) : [issue.path];
    for (const path of paths.map(jsonPath)) if (!problems.has(path)) problems.set(path, { path, message: issue.message });
  }
  return [...problems.values()];
}
