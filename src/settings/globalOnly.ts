/**
 * The settings a kernel start, the daemon or the model reads from the GLOBAL file alone. A project
 * file sits in the workspace, often a cloned repository the kernel can write: were these honoured
 * there, it could loosen its own sandbox, pick the interpreter or send the model's key elsewhere.
 * In a project file they stay valid (the file does not fail) but are ignored; a write that would
 * put one there is refused, so no client saves a value that silently does nothing.
 */
import { GLOBAL_ONLY_MODEL_FIELDS } from "../model/index.js";
import type { Settings } from "./schema.js";

/** Dotted keys (a section stands for every field in it) read from the global settings only. */
export const GLOBAL_ONLY_KEYS: readonly string[] = Object.freeze([
  "sandbox",
  "network",
  "limits",
  "kernel",
  "daemon",
  ...GLOBAL_ONLY_MODEL_FIELDS.map((field) => `model.${field}`),
  "skills.default",
  "python.packages",
]);

/** Why a project file does not take global-only settings, as messages end. */
export const GLOBAL_ONLY_REASON = "a project file sits in the workspace, which the kernel can write";

/** Whether `key` (dotted) is read from the global settings only: it is one of GLOBAL_ONLY_KEYS or lies inside one. */
export function isGlobalOnly(key: string): boolean {
  return GLOBAL_ONLY_KEYS.some((only) => key === only || key.startsWith(`${only}.`));
}

/** The message for a write of global-only `key` to a narrower scope. */
export function globalOnlyMessage(key: string, scope: string): string {
  return `${key} is read from the global settings only, so the ${scope} scope cannot set it (${GLOBAL_ONLY_REASON}); set it in the global scope`;
}

/**
 * The global-only keys `next` sets to a value other than `current` has: what a write to a project
 * file would change there and nobody would read. Removing one, or fields of one, is not a change it names.
 */
export function globalOnlyChanges(current: Settings, next: Settings): string[] {
  return GLOBAL_ONLY_KEYS.filter((key) => {
    const after = settingAt(next, key);
    return after !== undefined && !removesOnly(settingAt(current, key), after);
  });
}

/** Whether `after` is `before`, or `before` with some fields left out. */
function removesOnly(before: unknown, after: unknown): boolean {
  if (JSON.stringify(after) === JSON.stringify(before)) return true;
  const isSection = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
  if (!isSection(before) || !isSection(after)) return false;
  return Object.entries(after).every(([field, value]) => field in before && JSON.stringify(value) === JSON.stringify(before[field]));
}

/** The value at a dotted key (`kernel.pool`), or undefined. */
export function settingAt(settings: unknown, key: string): unknown {
  let value = settings;
  for (const part of key.split(".")) value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}
