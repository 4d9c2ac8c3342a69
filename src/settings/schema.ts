/**
 * The one schema of a settings file (D-4), shared by the global, project and session scopes.
 * Unknown top-level fields are kept (newer or other tools may own them); unknown fields inside a
 * known section are refused, since a typo there would silently change nothing.
 */
import { isAbsolute } from "node:path";
import { jsonNestingDepth } from "../json/index.js";
import { LIMIT_MINIMUMS, MAX_LIMIT_VALUE, SANDBOX_MODES, type SandboxMode } from "../sandbox/index.js";
import {
  MAX_BASE_URL_LENGTH,
  MAX_CONTEXT_TOKENS,
  MAX_ENV_NAME_LENGTH,
  MAX_MODEL_NAME_LENGTH,
  MAX_SCRIPT_PATH_LENGTH,
  MIN_CONTEXT_TOKENS,
  MODEL_MODES,
  MODEL_PROVIDERS,
  type ModelMode,
  type ModelProvider,
} from "../model/index.js";
import { remoteSettingsProblems, type RemoteKernelSettings } from "../kernel/remote/index.js";

export type { SandboxMode };
export type SettingsScope = "global" | "project" | "session";
export type Switch = "on" | "off";

export interface SkillsSettings {
  /** Only in the global scope: what an unnamed skill gets. */
  readonly default?: Switch;
  readonly on?: readonly string[];
  readonly off?: readonly string[];
}

export interface KernelSettings {
  readonly pool?: number;
  readonly kernelspec?: string;
  readonly python?: string;
  /** A Jupyter Server to run kernels on (K-12); honoured from the global file only. */
  readonly remote?: RemoteKernelSettings;
}

export interface LimitsSettings {
  readonly memoryMB?: number;
  readonly processes?: number;
  readonly openFiles?: number;
  readonly shmMB?: number;
}

/** The `model` section (O-7). Only the global file's provider, base_url, api_key_env and script are honoured (see resolveModelSettings). */
export interface ModelSection {
  readonly provider?: ModelProvider;
  readonly base_url?: string;
  readonly name?: string;
  /** The NAME of the environment variable holding the key; the key itself is never a setting. */
  readonly api_key_env?: string;
  readonly mode?: ModelMode;
  readonly context_tokens?: number;
  readonly script?: string;
}

export interface Settings {
  readonly skills?: SkillsSettings;
  readonly sandbox?: SandboxMode;
  readonly kernel?: KernelSettings;
  readonly limits?: LimitsSettings;
  readonly network?: boolean;
  readonly model?: ModelSection;
  readonly [field: string]: unknown;
}

/** One thing wrong with a settings value; `path` is a dotted path such as `skills.on[2]`. */
export interface SettingsProblem {
  readonly path: string;
  readonly message: string;
}

export type SettingsValidation =
  | { readonly ok: true; readonly settings: Settings }
  | { readonly ok: false; readonly problems: readonly SettingsProblem[] };

/** Unicode code points in a skill name listed in `on` / `off` (the S-4 name bound). */
export const MAX_SETTINGS_SKILL_NAME_LENGTH = 64;
/** Names in one `on` or `off` list. */
export const MAX_SETTINGS_SKILL_NAMES = 1024;
/** Largest pre-started kernel pool (K-11). */
export const MAX_KERNEL_POOL = 8;
/** Length of `kernel.kernelspec` and `kernel.python`. */
export const MAX_KERNEL_FIELD_LENGTH = 4096;
/**
 * Levels of arrays and objects in one settings value (the top-level object is 1). Our own fields
 * need 3; the rest is room for the unknown top-level fields other tools keep here (B: deep nesting).
 */
export const MAX_SETTINGS_DEPTH = 64;

const SWITCHES: readonly string[] = ["on", "off"];

type Problems = SettingsProblem[];
type Record_ = Readonly<Record<string, unknown>>;

/** Checks a parsed JSON value against the schema for `scope`; returns the typed value or every problem found. */
export function validateSettings(value: unknown, scope: SettingsScope): SettingsValidation {
  const tooDeep = settingsDepthProblem(value);
  if (tooDeep) return { ok: false, problems: [tooDeep] };
  const problems: Problems = [];
  if (!isRecord(value)) {
    problems.push({ path: "", message: `settings must be a JSON object, got ${describe(value)}` });
    return { ok: false, problems };
  }
  if ("skills" in value) checkSkills(value.skills, scope, problems);
  if ("sandbox" in value) checkEnum(value.sandbox, SANDBOX_MODES as readonly string[], "sandbox", problems);
  if ("kernel" in value) checkKernel(value.kernel, problems);
  if ("limits" in value) checkLimits(value.limits, problems);
  if ("model" in value) checkModel(value.model, problems);
  if ("network" in value && typeof value.network !== "boolean") {
    problems.push({ path: "network", message: `must be true or false, got ${describe(value.network)}` });
  }
  return problems.length === 0 ? { ok: true, settings: value as Settings } : { ok: false, problems };
}

/** The problem of a value nested deeper than MAX_SETTINGS_DEPTH, or undefined; safe on any depth. */
export function settingsDepthProblem(value: unknown): SettingsProblem | undefined {
  if (jsonNestingDepth(value, MAX_SETTINGS_DEPTH) <= MAX_SETTINGS_DEPTH) return undefined;
  return { path: "", message: `nests arrays and objects more than ${MAX_SETTINGS_DEPTH} levels deep; at most ${MAX_SETTINGS_DEPTH} (MAX_SETTINGS_DEPTH)` };
}

function checkSkills(value: unknown, scope: SettingsScope, problems: Problems): void {
  if (!checkSection(value, "skills", ["default", "on", "off"], problems)) return;
  if ("default" in value) {
    if (scope !== "global") problems.push({ path: "skills.default", message: `only the global settings may set a default, not the ${scope} scope` });
    else checkEnum(value.default, SWITCHES, "skills.default", problems);
  }
  const on = "on" in value ? checkNames(value.on, "skills.on", problems) : [];
  const off = "off" in value ? checkNames(value.off, "skills.off", problems) : [];
  const offSet = new Set(off);
  on.forEach((name, index) => {
    if (offSet.has(name)) problems.push({ path: `skills.on[${index}]`, message: `"${name}" is listed in both on and off` });
  });
}

/** Returns the valid names of the list so the on/off overlap check still runs when some are bad. */
function checkNames(value: unknown, path: string, problems: Problems): string[] {
  if (!Array.isArray(value)) {
    problems.push({ path, message: `must be a list of skill names, got ${describe(value)}` });
    return [];
  }
  if (value.length > MAX_SETTINGS_SKILL_NAMES) {
    problems.push({ path, message: `lists ${value.length} names; at most ${MAX_SETTINGS_SKILL_NAMES} (MAX_SETTINGS_SKILL_NAMES) are allowed` });
    return [];
  }
  const names: string[] = [];
  value.forEach((item: unknown, index) => {
    const message = skillNameProblem(item);
    if (message) problems.push({ path: `${path}[${index}]`, message });
    else names.push(item as string);
  });
  return names;
}

/** Why `value` cannot be a skill name in a settings list, or undefined when it can. */
export function skillNameProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return `a skill name must be a string, got ${describe(value)}`;
  if (value.trim().length === 0) return "a skill name must not be empty";
  const length = [...value].length;
  if (length > MAX_SETTINGS_SKILL_NAME_LENGTH) {
    return `skill name has ${length} characters; at most ${MAX_SETTINGS_SKILL_NAME_LENGTH} (MAX_SETTINGS_SKILL_NAME_LENGTH)`;
  }
  return undefined;
}

function checkKernel(value: unknown, problems: Problems): void {
  if (!checkSection(value, "kernel", ["pool", "kernelspec", "python", "remote"], problems)) return;
  if ("remote" in value) for (const [path, message] of remoteSettingsProblems(value.remote)) problems.push({ path, message });
  if ("pool" in value) checkInteger(value.pool, "kernel.pool", 0, MAX_KERNEL_POOL, problems);
  for (const key of ["kernelspec", "python"] as const) {
    if (!(key in value)) continue;
    const field = value[key];
    if (typeof field !== "string" || field.length === 0 || field.length > MAX_KERNEL_FIELD_LENGTH) {
      problems.push({ path: `kernel.${key}`, message: `must be a non-empty string of at most ${MAX_KERNEL_FIELD_LENGTH} characters, got ${describe(field)}` });
    }
  }
}

function checkLimits(value: unknown, problems: Problems): void {
  const keys = Object.keys(LIMIT_MINIMUMS) as (keyof typeof LIMIT_MINIMUMS)[];
  if (!checkSection(value, "limits", keys, problems)) return;
  for (const key of keys) {
    // The sandbox's own range: a value it would refuse must not be saved, or every session would fail to open.
    if (key in value) checkInteger(value[key], `limits.${key}`, LIMIT_MINIMUMS[key], MAX_LIMIT_VALUE, problems);
  }
}

const MODEL_FIELDS = ["provider", "base_url", "name", "api_key_env", "mode", "context_tokens", "script"];
/** A portable environment variable name (POSIX: letters, digits, underscore; no leading digit). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkModel(value: unknown, problems: Problems): void {
  if (!checkSection(value, "model", MODEL_FIELDS, problems)) return;
  if ("provider" in value) checkEnum(value.provider, MODEL_PROVIDERS, "model.provider", problems);
  if ("mode" in value) checkEnum(value.mode, MODEL_MODES, "model.mode", problems);
  if ("context_tokens" in value) checkInteger(value.context_tokens, "model.context_tokens", MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS, problems);
  if ("name" in value) checkText(value.name, "model.name", MAX_MODEL_NAME_LENGTH, problems);
  if ("base_url" in value && checkText(value.base_url, "model.base_url", MAX_BASE_URL_LENGTH, problems)) {
    const message = baseUrlProblem(value.base_url as string);
    if (message) problems.push({ path: "model.base_url", message });
  }
  if ("api_key_env" in value && !isEnvName(value.api_key_env)) {
    // The value is never quoted: a key pasted here by mistake must not reach a log through this message.
    problems.push({ path: "model.api_key_env", message: `must be the name of an environment variable (letters, digits and _, not starting with a digit, at most ${MAX_ENV_NAME_LENGTH} characters), not the key itself` });
  }
  if ("script" in value && checkText(value.script, "model.script", MAX_SCRIPT_PATH_LENGTH, problems) && !isAbsolute(value.script as string)) {
    problems.push({ path: "model.script", message: `must be an absolute path, got ${describe(value.script)}` });
  }
}

function isEnvName(value: unknown): boolean {
  return typeof value === "string" && value.length <= MAX_ENV_NAME_LENGTH && ENV_NAME.test(value);
}

/** Why `url` cannot be a model server's base URL, or undefined. Credentials in it would be a key stored in settings. */
function baseUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be an absolute http or https URL, got ${describe(url)}`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `must be an http or https URL, got ${describe(url)}`;
  if (parsed.username !== "" || parsed.password !== "") return "must not carry a user name or password; the key comes from the variable api_key_env names";
  if (parsed.search !== "" || parsed.hash !== "") return `must not have a query or fragment (request paths are appended to it), got ${describe(url)}`;
  return undefined;
}

/** True when `value` is a non-empty string of at most `max` characters; records a problem otherwise. */
function checkText(value: unknown, path: string, max: number, problems: Problems): boolean {
  if (typeof value === "string" && value.trim().length > 0 && value.length <= max) return true;
  problems.push({ path, message: `must be a non-empty string of at most ${max} characters, got ${describe(value)}` });
  return false;
}

/** True when `value` is an object holding only `allowed` keys; records a problem per stray key. */
function checkSection(value: unknown, path: string, allowed: readonly string[], problems: Problems): value is Record_ {
  if (!isRecord(value)) {
    problems.push({ path, message: `must be an object, got ${describe(value)}` });
    return false;
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) problems.push({ path: `${path}.${key}`, message: `unknown field; ${path} allows ${allowed.join(", ")}` });
  }
  return true;
}

function checkEnum(value: unknown, allowed: readonly string[], path: string, problems: Problems): void {
  if (typeof value !== "string" || !allowed.includes(value)) {
    problems.push({ path, message: `must be one of ${allowed.map((item) => `"${item}"`).join(", ")}, got ${describe(value)}` });
  }
}

function checkInteger(value: unknown, path: string, min: number, max: number, problems: Problems): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    problems.push({ path, message: `must be an integer from ${min} to ${max}, got ${describe(value)}` });
  }
}

function isRecord(value: unknown): value is Record_ {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return typeof value === "object" ? "an object" : typeof value;
}
