/** The model a session's turns use, from its settings now (O-7). */
import { createAdapter, resolveModelSettings, type ModelEnv, type ModelMode } from "../model/index.js";
import { globalSettingsTarget, type ScopedSettings } from "../settings/index.js";
import { stateDir } from "../platform/index.js";
import type { TurnModel } from "./worker.js";

/** The adapter, mode and budget the settings name; `mode` overrides the settings' for one run (`albedo chat --mode`). Throws ModelError "config". */
export async function turnModel(scopes: ScopedSettings, env: ModelEnv, mode?: ModelMode): Promise<TurnModel> {
  const settings = resolveModelSettings(scopes, globalSettingsTarget(stateDir(env as NodeJS.ProcessEnv)).file);
  const adapter = await createAdapter(settings, env);
  return { adapter, mode: mode ?? settings.mode, contextTokens: settings.contextTokens, images: settings.images };
}
