/**
 * This process's own resource limits, read from /proc/self/limits (Node has no getrlimit). A child
 * inherits them and can lower but never raise a hard limit without privilege, so what a child may be
 * given is bounded by these.
 */
import { readFileSync } from "node:fs";

/** The rows of /proc/self/limits this module reads, by the name it gives them. */
const ROWS = { openFiles: "Max open files", processes: "Max processes", addressSpaceBytes: "Max address space" } as const;

export type ResourceName = keyof typeof ROWS;

/** A limit's soft and hard values; `Infinity` stands for "unlimited". */
export interface ResourceLimit {
  readonly soft: number;
  readonly hard: number;
}

function value(text: string): number {
  return text === "unlimited" ? Infinity : Number(text);
}

/** This process's `name` limit, or undefined where /proc/self/limits cannot be read or lacks the row. */
export function ownLimit(name: ResourceName, table?: string): ResourceLimit | undefined {
  let text = table;
  try {
    text ??= readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
  const row = text.split("\n").find((line) => line.startsWith(ROWS[name]));
  const fields = row?.slice(ROWS[name].length).trim().split(/\s+/);
  if (fields === undefined || fields.length < 2) return undefined;
  const [soft, hard] = [value(fields[0]!), value(fields[1]!)];
  return Number.isNaN(soft) || Number.isNaN(hard) ? undefined : { soft, hard };
}
