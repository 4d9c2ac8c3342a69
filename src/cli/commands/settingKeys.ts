/**
 * The keys `albedo settings set` offers, and how it reads a VALUE typed on the command line. The
 * schema (src/settings) stays the judge of what is valid: the daemon validates every write and
 * its refusal is printed as is. This table only turns text into the JSON type the key takes.
 */
import { REPLACED_SECTIONS, settingAt, type Settings } from "../../settings/index.js";
import { UsageError } from "../plumbing/args.js";

type Kind = "string" | "integer" | "boolean" | { readonly oneOf: readonly string[] };

export interface SettableKey {
  readonly key: string;
  readonly kind: Kind;
}

export const SETTABLE_KEYS: readonly SettableKey[] = [
  { key: "sandbox", kind: { oneOf: ["auto", "required", "off"] } },
  { key: "network", kind: "boolean" },
  { key: "skills.default", kind: { oneOf: ["on", "off"] } },
  { key: "kernel.pool", kind: "integer" },
  { key: "kernel.kernelspec", kind: "string" },
  { key: "kernel.python", kind: "string" },
  { key: "daemon.max_sessions", kind: "integer" },
  { key: "limits.memoryMB", kind: "integer" },
  { key: "limits.processes", kind: "integer" },
  { key: "limits.openFiles", kind: "integer" },
  { key: "limits.shmMB", kind: "integer" },
  { key: "limits.packagesMB", kind: "integer" },
  { key: "model.provider", kind: "string" },
  { key: "model.base_url", kind: "string" },
  { key: "model.api_key_env", kind: "string" },
  { key: "model.script", kind: "string" },
  { key: "model.name", kind: "string" },
  { key: "model.mode", kind: { oneOf: ["code", "tool"] } },
  { key: "model.context_tokens", kind: "integer" },
  { key: "model.max_tokens", kind: "integer" },
  { key: "model.images", kind: "boolean" },
];

/**
 * Keys a kernel start reads from the global settings alone (a project file cannot loosen its own
 * sandbox), with the value they take when the global file sets none.
 */
const GLOBAL_ONLY_DEFAULTS: Readonly<Record<string, string | boolean>> = { sandbox: "auto", network: false };

/** The value a global-only key takes now and where it came from, as `settings get KEY` shows it; undefined for other keys. */
export function effectiveLine(global: Settings | undefined, key: string): string | undefined {
  if (!(key in GLOBAL_ONLY_DEFAULTS)) return undefined;
  const set = global === undefined ? undefined : settingAt(global, key);
  const where = set === undefined ? "the default; only the global settings may set it" : "from the global settings";
  return `effective: ${key} = ${JSON.stringify(set ?? GLOBAL_ONLY_DEFAULTS[key])} (${where})`;
}

/** The JSON value `text` stands for under `spec`; throws UsageError naming what the key takes. */
export function parseSettingValue(spec: SettableKey, text: string): string | number | boolean {
  const { kind } = spec;
  if (kind === "string") return text;
  if (kind === "integer") {
    // A negative number is read as one: the schema then says the range the key takes.
    if (!/^-?\d{1,15}$/.test(text)) throw new UsageError(`${spec.key} takes a whole number, got "${text}"`);
    return Number(text);
  }
  if (kind === "boolean") {
    if (text !== "true" && text !== "false") throw new UsageError(`${spec.key} takes true or false, got "${text}"`);
    return text === "true";
  }
  if (!kind.oneOf.includes(text)) throw new UsageError(`${spec.key} takes ${kind.oneOf.join(", ")}, got "${text}"`);
  return text;
}

/**
 * The PATCH /settings fields that set `spec` to `value`. The daemon replaces a section whole
 * (kernel, daemon, limits, model), so the section goes with its other fields as `current` has them;
 * skills.default is a field of the skills patch.
 */
export function settingPatch(current: Settings, spec: SettableKey, value: unknown): Record<string, unknown> {
  const [section, field] = spec.key.split(".") as [string, string | undefined];
  if (field === undefined) return { [section]: value };
  if (section === "skills") return { skills: { [field]: value } };
  const existing = (current as Record<string, unknown>)[section];
  return { [section]: { ...(typeof existing === "object" && existing !== null ? existing : {}), [field]: value } };
}

/** Keys `albedo settings unset` removes: every settable key, and each section a write replaces whole. */
export const UNSETTABLE_KEYS: readonly string[] = [...new Set([...SETTABLE_KEYS.map((k) => k.key), ...Object.keys(REPLACED_SECTIONS)])];

/**
 * The PATCH /settings fields that remove `key` from `current`, or undefined when `current` does not
 * set it. A field leaves its section with the other fields, or removes the section it was alone in.
 */
export function unsetPatch(current: Settings, key: string): Record<string, unknown> | undefined {
  if (settingAt(current, key) === undefined) return undefined;
  const [section, field] = key.split(".") as [string, string | undefined];
  if (field === undefined) return { [section]: null };
  if (section === "skills") return { skills: { [field]: null } };
  const rest: Record<string, unknown> = { ...((current as Record<string, unknown>)[section] as object) };
  delete rest[field];
  return { [section]: Object.keys(rest).length > 0 ? rest : null };
}
