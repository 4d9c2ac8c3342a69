import type { AdapterOptions, ModelAdapter, ModelEnv } from "./adapter.js";
import type { ModelSettings } from "./resolve.js";

/** Builds one provider's adapter; throws ModelError `config` when the settings or environment cannot. */
export type AdapterFactory = (settings: ModelSettings, env: ModelEnv, options: AdapterOptions) => Promise<ModelAdapter>;

/**
 * Every provider, by the name `model.provider` takes. Loaded on first use, so reading settings
 * never loads an SDK. Adding a provider is one file plus one line here; the settings
 * schema takes its names from this table.
 */
export const PROVIDERS = {
  openai: async () => (await import("./openai.js")).createOpenAIAdapter,
  anthropic: async () => (await import("./anthropic.js")).createAnthropicAdapter,
  stub: async () => (await import("./stub.js")).createStubAdapter,
} satisfies Record<string, () => Promise<AdapterFactory>>;

export type ModelProvider = keyof typeof PROVIDERS;
export const MODEL_PROVIDERS = Object.keys(PROVIDERS) as readonly ModelProvider[];

/** `model.base_url` when unset: the provider's own API (the SDKs append their paths). */
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";
export const DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com";
/** `model.api_key_env` of the anthropic provider when unset (the openai provider sends no key then). */
export const DEFAULT_ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY";

/** What each provider assumes for the global-only fields left unset; `/model` shows them as they will be used. */
export const PROVIDER_DEFAULTS: Readonly<Record<ModelProvider, { readonly baseUrl?: string; readonly apiKeyEnv?: string }>> = {
  openai: { baseUrl: DEFAULT_OPENAI_BASE_URL },
  anthropic: { baseUrl: DEFAULT_ANTHROPIC_BASE_URL, apiKeyEnv: DEFAULT_ANTHROPIC_KEY_ENV },
  stub: {},
};
