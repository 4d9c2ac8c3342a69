/**
 * A remote server's own words, as albedo may show them (K-12, B): a server may echo what it was
 * sent, the token included ("denied for token …"), and may say as much as it likes. Whatever of its
 * text reaches an error, an API answer or the log goes through here.
 */
import { MAX_REMOTE_QUOTE_CHARS } from "./limits.js";
import type { Log } from "../../platform/index.js";

/** What stands in for a secret in quoted text. */
export const REDACTED = "[redacted]";
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]+/g;

/** `text` with every secret (as sent, and as it reads in a URL) replaced by REDACTED. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === "") continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join(REDACTED);
  }
  return out;
}

/**
 * `text` fit to quote: secrets redacted first (a cut must not leave part of one), control
 * characters turned into spaces (one line, no terminal escapes), at most MAX_REMOTE_QUOTE_CHARS
 * characters; plain ASCII is added, so the result is also a valid HTTP status text when `text` is one.
 */
export function quoteRemote(text: string, secrets: readonly string[]): string {
  const line = redact(text, secrets).replace(CONTROLS, " ").trim();
  return line.length > MAX_REMOTE_QUOTE_CHARS ? `${line.slice(0, MAX_REMOTE_QUOTE_CHARS)}...` : line;
}

/** `log` with the secrets redacted from the message and from every string in its data. */
export function redactingLog(log: Log, secrets: readonly string[]): Log {
  if (secrets.every((secret) => secret === "")) return log;
  return (level, message, data) => {
    const clean = data && Object.fromEntries(Object.entries(data).map(([key, value]) => [key, typeof value === "string" ? redact(value, secrets) : value]));
    log(level, redact(message, secrets), clean);
  };
}
