import type { z } from "zod";
import { ModelError } from "./errors.js";

/** `raw` checked against `schema`; throws ModelError `malformed` naming `what`, the `shape` it lacks, and the first problem's path. */
export function parseShape<T>(schema: z.ZodType<T>, raw: unknown, what: string, shape: string): T {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  throw new ModelError("malformed", `${what} does not have the shape of ${shape}${where}: ${issue?.message ?? "unknown problem"}`);
}
