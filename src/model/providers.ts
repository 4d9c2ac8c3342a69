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
