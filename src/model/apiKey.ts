import type { ModelEnv } from "./adapter.js";
import { ModelError } from "./errors.js";

/** Characters an HTTP header value can carry (visible ASCII); fetch would otherwise throw an error quoting the key. */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * The key from the variable `name`, or undefined when no variable is named (a local server
 * without keys). Throws ModelError `config`, without quoting the value, when the variable is
 * unset, empty, or holds what a header cannot carry.
 */
export function readKey(name: string | undefined, env: ModelEnv): string | undefined {
  if (name === undefined) return undefined;
  const key = env[name]?.trim();
  if (!key) throw new ModelError("config", `model.api_key_env names the environment variable ${name}, which is not set or empty: export the API key in it`);
  if (!HEADER_SAFE.test(key)) throw new ModelError("config", `the environment variable ${name} holds characters an HTTP header cannot carry (spaces or control characters), so it cannot be the API key`);
  return key;
}
