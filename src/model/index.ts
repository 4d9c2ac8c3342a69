/** Model adapters (O-7): the interface the turn runner talks to, the providers behind it, and the `model` settings. */
import type { AdapterOptions, ModelAdapter, ModelEnv } from "./adapter.js";
import { ModelError } from "./errors.js";
import { MODEL_PROVIDERS, PROVIDERS } from "./providers.js";
import type { ModelSettings } from "./resolve.js";

export type {
  AdapterOptions,
  ChatMessage,
  FinishReason,
  ModelAdapter,
  ModelDescription,
  ModelEnv,
  ModelLogger,
  ModelMode,
  ModelReply,
  ModelRequest,
  ModelUsage,
  ToolCall,
  ToolSpec,
} from "./adapter.js";
export { MODEL_MODES } from "./adapter.js";
export { ModelError, isModelError, type ModelErrorKind } from "./errors.js";
export * from "./limits.js";
export { MODEL_PROVIDERS, type ModelProvider } from "./providers.js";
export {
  DEFAULT_MODEL_MODE,
  describeModelSettings,
  GLOBAL_ONLY_MODEL_FIELDS,
  ignoredModelFields,
  resolveModelSettings,
  type ModelSettings,
} from "./resolve.js";

/**
 * The adapter `settings.provider` names, built from `settings` and the key variable in `env`.
 * Throws ModelError `config` (before any request) when the settings or environment do not suffice.
 */
export async function createAdapter(settings: ModelSettings, env: ModelEnv, options: AdapterOptions = {}): Promise<ModelAdapter> {
  // Settings are validated when read; this guards a value built in code from an unchecked cast.
  if (!Object.hasOwn(PROVIDERS, settings.provider)) throw new ModelError("config", `model.provider "${String(settings.provider)}" is not one of ${MODEL_PROVIDERS.join(", ")}`);
  const factory = await PROVIDERS[settings.provider]();
  return factory(settings, env, options);
}
