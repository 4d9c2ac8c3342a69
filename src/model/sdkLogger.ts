import { inspect } from "node:util";
import type { ModelLogger } from "./adapter.js";
import { withoutSecret } from "./errors.js";

/** Levels of objects the SDK logs that are rendered (then redacted) before reaching an injected logger. */
const LOG_INSPECT_DEPTH = 6;

/**
 * `logger` with the key taken out of every line. The SDKs hide their auth headers, but quote what
 * a server sends back (an unparsable line, an error body), and a server may echo the key.
 */
export function redactingLogger(logger: ModelLogger, key: string | undefined): ModelLogger {
  const clean = (item: unknown): string => withoutSecret(typeof item === "string" ? item : inspect(item, { depth: LOG_INSPECT_DEPTH }), key);
  const wrap =
    (level: keyof ModelLogger) =>
    (message: string, ...rest: unknown[]): void =>
      logger[level](clean(message), ...rest.map(clean));
  return { error: wrap("error"), warn: wrap("warn"), info: wrap("info"), debug: wrap("debug") };
}
