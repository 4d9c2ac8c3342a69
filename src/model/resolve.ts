import type { ModelMode } from "./adapter.js";
import { ModelError } from "./errors.js";
import { DEFAULT_CONTEXT_TOKENS } from "./limits.js";
import { MODEL_PROVIDERS, PROVIDER_DEFAULTS, type ModelProvider } from "./providers.js";

/**
 * Fields read from the global settings file only. A project file lives in a cloned repository:
 * were these honoured there, a repository could send the user's key to its own server
 * (`base_url`), have another variable's secret sent as the key (`api_key_env`), or pick what runs.
 */
export const GLOBAL_ONLY_MODEL_FIELDS = ["provider", "base_url", "api_key_env", "script"] as const;
/** Fields any scope may set; the narrowest scope that sets one wins (session, project, global). */
const LAYERED_MODEL_FIELDS = ["name", "mode", "context_tokens", "max_tokens", "images"] as const;

/** The `model` section of a settings file, as the settings schema has validated it. */
export interface ModelSection {
  readonly provider?: ModelProvider;
  readonly base_url?: string;
  readonly name?: string;
  readonly api_key_env?: string;
  readonly mode?: ModelMode;
  readonly context_tokens?: number;
  readonly max_tokens?: number;
  readonly images?: boolean;
  readonly script?: string;
}

/** The settings scopes as far as the model is concerned; the settings domain's ScopedSettings is one. */
export interface ModelScopes {
  readonly global?: { readonly model?: ModelSection };
  readonly project?: { readonly model?: ModelSection };
  readonly session?: { readonly model?: ModelSection };
}

/** `model.mode` when no scope sets it. */
export const DEFAULT_MODEL_MODE: ModelMode = "code";

/** `model.images` when no scope sets it: a cell's images go to the model. */
export const DEFAULT_MODEL_IMAGES = true;

/** The effective model settings, defaults applied; what `createAdapter` takes. */
export interface ModelSettings {
  readonly provider: ModelProvider;
  readonly baseUrl?: string;
  readonly name?: string;
  readonly apiKeyEnv?: string;
  readonly mode: ModelMode;
  readonly contextTokens: number;
  /** `model.max_tokens`: the cap on one reply's tokens where the provider takes one (Anthropic; DEFAULT_MAX_TOKENS when unset). */
  readonly maxTokens?: number;
  /** Whether a cell's images are sent to the model (I-2); false sends a text note instead. */
  readonly images: boolean;
  readonly script?: string;
}

/**
 * The effective `model` settings of the scopes (O-7). Throws ModelError `config` when the global
 * file names no provider: albedo runs no model until the user chooses one.
 */
/** `globalFile`: the global settings file as the messages name it. */
export function resolveModelSettings(scopes: ModelScopes, globalFile = "$ALBEDO_HOME/settings.json"): ModelSettings {
  const global: ModelSection = scopes.global?.model ?? {};
  if (global.provider === undefined) throw new ModelError("config", noProviderMessage(scopes, globalFile));
  const layered = <K extends (typeof LAYERED_MODEL_FIELDS)[number]>(key: K): ModelSection[K] =>
    scopes.session?.model?.[key] ?? scopes.project?.model?.[key] ?? global[key];
  return {
    provider: global.provider,
    baseUrl: global.base_url,
    name: layered("name"),
    apiKeyEnv: global.api_key_env,
    mode: layered("mode") ?? DEFAULT_MODEL_MODE,
    contextTokens: layered("context_tokens") ?? DEFAULT_CONTEXT_TOKENS,
    ...(layered("max_tokens") !== undefined ? { maxTokens: layered("max_tokens") } : {}),
    images: layered("images") ?? DEFAULT_MODEL_IMAGES,
    script: global.script,
  };
}

/** The global-only fields a project or session scope sets, as `project: model.base_url`; they are ignored, and a UI may say so. */
export function ignoredModelFields(scopes: ModelScopes): string[] {
  const ignored: string[] = [];
  for (const scope of ["project", "session"] as const) {
    const section = scopes[scope]?.model;
    if (!section) continue;
    for (const field of GLOBAL_ONLY_MODEL_FIELDS) if (section[field] !== undefined) ignored.push(`${scope}: model.${field}`);
  }
  return ignored;
}

function noProviderMessage(scopes: ModelScopes, globalFile: string): string {
  const base = `no model configured: set model.provider (${MODEL_PROVIDERS.map((name) => `"${name}"`).join(" or ")}) in the global settings file (${globalFile})`;
  const elsewhere = ignoredModelFields(scopes).filter((field) => field.endsWith("model.provider"));
  if (elsewhere.length === 0) return base;
  return `${base}; the ${elsewhere.map((field) => field.split(":")[0]).join(" and ")} settings name one, which is ignored because only the global file may choose the model server`;
}

/** What `/model` shows: provider, base URL and key variable (its name only) as they will be used, defaults included, model name, mode and budget, or why there is none. */
export function describeModelSettings(scopes: ModelScopes, globalFile?: string): Record<string, unknown> {
  let settings: ModelSettings;
  try {
    settings = resolveModelSettings(scopes, globalFile);
  } catch (error) {
    return { provider: "none", detail: error instanceof Error ? error.message : String(error) };
  }
  const defaults = PROVIDER_DEFAULTS[settings.provider];
  const baseUrl = settings.baseUrl ?? defaults.baseUrl;
  const apiKeyEnv = settings.apiKeyEnv ?? defaults.apiKeyEnv;
  return {
    provider: settings.provider,
    ...(baseUrl ? { base_url: baseUrl } : {}),
    ...(settings.name ? { model: settings.name } : {}),
    ...(apiKeyEnv ? { api_key_env: apiKeyEnv } : {}),
    ...(settings.script ? { script: settings.script } : {}),
    mode: settings.mode,
    context_tokens: settings.contextTokens,
    ...(settings.maxTokens !== undefined ? { max_tokens: settings.maxTokens } : {}),
    images: settings.images,
  };
}
