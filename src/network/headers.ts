/**
 * Headers on their way through the proxy: hop-by-hop ones dropped (RFC 9110 7.6.1, with the
 * proxy's own), and for a secrets host the configured headers set from host variables, any the
 * client sent under the same names removed first so each is sent once, with the host's value.
 */
import { MAX_SECRET_VALUE_BYTES } from "./limits.js";
import type { SecretHeader } from "./policy.js";
import { SECRET_PLACEHOLDER } from "./schema.js";

/** Dropped both ways: they describe one hop, and the proxy frames each hop itself. */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"];
/** Dropped from requests: the proxy has already answered `Expect: 100-continue` to its client. */
const REQUEST_ONLY = ["expect"];

/** `raw` (Node's flat [name, value, …] list) without hop-by-hop headers, those `Connection` names, and `also`. */
function filtered(raw: readonly string[], also: readonly string[]): string[] {
  const drop = new Set([...HOP_BY_HOP, ...also]);
  for (let index = 0; index < raw.length; index += 2) {
    if (raw[index]!.toLowerCase() !== "connection") continue;
    for (const token of raw[index + 1]!.split(",")) drop.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let index = 0; index < raw.length; index += 2) {
    if (!drop.has(raw[index]!.toLowerCase())) kept.push(raw[index]!, raw[index + 1]!);
  }
  return kept;
}

/** A client's request headers as sent upstream. */
export function requestHeaders(raw: readonly string[]): string[] {
  return filtered(raw, REQUEST_ONLY);
}

/** An upstream response's headers as sent to the client. */
export function responseHeaders(raw: readonly string[]): string[] {
  return filtered(raw, []);
}

/** Why a secret cannot be sent (a variable unset or unfit), naming the variable but never its value. */
export class SecretUnavailable extends Error {
  override readonly name = "SecretUnavailable";
}

/** A client's request headers for a secrets host: the secret headers' names removed, then each set from `env`; throws SecretUnavailable. */
export function requestHeadersWithSecrets(raw: readonly string[], secrets: readonly SecretHeader[], env: NodeJS.ProcessEnv, host: string): string[] {
  const values = secrets.map((secret) => [secret.name, secretValue(secret, env, host)] as const);
  const kept = filtered(raw, [...REQUEST_ONLY, ...secrets.map((secret) => secret.name.toLowerCase())]);
  for (const [name, value] of values) kept.push(name, value);
  return kept;
}

function secretValue(secret: SecretHeader, env: NodeJS.ProcessEnv, host: string): string {
  const variable = env[secret.fromEnv];
  const where = `the variable ${secret.fromEnv} that network.secrets names for ${host}`;
  if (variable === undefined || variable === "") throw new SecretUnavailable(`${where} is not set on the host`);
  const value = secret.format.split(SECRET_PLACEHOLDER).join(variable);
  if (/[^\t\x20-\x7e\x80-\xff]/.test(value)) throw new SecretUnavailable(`${where} holds a control character (a line break, NUL…), which a header cannot carry`);
  if (Buffer.byteLength(value) > MAX_SECRET_VALUE_BYTES) throw new SecretUnavailable(`${where} makes a header over ${MAX_SECRET_VALUE_BYTES} bytes (MAX_SECRET_VALUE_BYTES)`);
  return value;
}
