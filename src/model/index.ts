/** Model adapters (O-7): the interface the turn runner talks to, the providers behind it, and the `model` settings. */
import type { AdapterOptions, ModelAdapter, ModelEnv } from "./adapter.js";
import { ModelError } from "./errors.js";
import { MODEL_PROVIDERS, PROVIDERS } from "./providers.js";
import type { ModelSettings } from "./resolve.js";

export type { AdapterOptions, ChatMessage, MessageImage, ModelAdapter, ModelEnv, ModelLogger, ModelMode, ModelReply, ModelRequest, ToolCall, ToolSpec } from "./adapter.js";
export { IMAGES_OF_CALL_PREFIX, MODEL_MODES, TOOL_ERROR_PREFIX } from "./adapter.js";
export { ModelError, isModelError } from "./errors.js";
export {
  MODEL_MAX_RETRIES,
  MODEL_MAX_RETRY_WAIT_MS,
  MAX_MODEL_SSE_EVENT_BYTES,
  MAX_TOOL_ARGUMENT_DEPTH,
  MAX_MODEL_REPLY_BYTES,
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_MAX_TOKENS,
  MAX_MAX_TOKENS,
  MIN_CONTEXT_TOKENS,
  MAX_CONTEXT_TOKENS,
  MAX_MODEL_NAME_LENGTH,
  MAX_BASE_URL_LENGTH,
  MAX_ENV_NAME_LENGTH,
  MAX_SCRIPT_PATH_LENGTH,
  MAX_STUB_SCRIPT_BYTES,
} from "./limits.js";
export { MODEL_PROVIDERS } from "./providers.js";
export { chatCompletionParams } from "./openaiRequest.js";
export { meteredAdapter, sumUsage, usageLine, type UsageTotals } from "./usage.js";
export { describeModelSettings, GLOBAL_ONLY_MODEL_FIELDS, ignoredModelFields, resolveModelSettings, type ModelSettings } from "./resolve.js";

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
