/**
 * Keeping secrets out of what albedo says (M-1): every diagnostic, log line, error and result of a
 * server passes through its Redactor, which replaces the values of its `from_env` variables and
 * headers, and the forms a server echoing them would write (JSON-escaped, URL-encoded).
 */
import { visibleControls } from "../text/index.js";
import { MAX_MCP_QUOTE_CHARS } from "./limits.js";

/** What stands in a text where a secret was. */
export const REDACTED = "[redacted]";

export class Redactor {
  private readonly forms: readonly string[];

  constructor(secrets: readonly string[]) {
    const forms = new Set<string>();
    for (const secret of secrets) {
      // "Bearer TOKEN": a server may echo the token without its scheme.
      const token = /^[A-Za-z][\w-]*\s+(\S{8,})$/.exec(secret)?.[1];
      for (const value of token === undefined ? [secret] : [secret, token]) {
        if (value.length === 0) continue;
        forms.add(value);
        forms.add(JSON.stringify(value).slice(1, -1));
        forms.add(encodeURIComponent(value));
      }
    }
    // Longest first: a secret that contains another is replaced whole.
    this.forms = [...forms].sort((a, b) => b.length - a.length);
  }

  /** `text` with every form of every secret replaced by REDACTED. */
  redact(text: string): string {
    let out = text;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }

  /**
   * Server text fit to quote in one line: redacted first (a cut must not leave half a secret),
   * controls made visible, whitespace folded, cut to `max` characters; an ending that could be the
   * start of a secret cut by the bound is dropped too. `truncated` says the caller already cut
   * `text` short (its end may be half a secret even when it fits).
   */
  quote(text: string, max = MAX_MCP_QUOTE_CHARS, truncated = false): string {
    const line = visibleControls(this.redact(text).replace(/\s+/g, " ").trim());
    if (line.length <= max && !truncated) return line;
    return `${this.withoutSecretStart(line.slice(0, max))}…`;
  }

  /** Redacts every string inside a JSON value (object keys included); other values are kept. Recursive: callers bound the depth first. */
  redactValue<T>(value: T): T {
    if (this.forms.length === 0) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === "string") return this.redact(value);
    if (Array.isArray(value)) return value.map((item) => this.walk(item));
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.redact(key), this.walk(item)]));
  }

  private withoutSecretStart(text: string): string {
    for (const form of this.forms) {
      for (let length = Math.min(form.length - 1, text.length); length > 0; length--) {
        if (text.endsWith(form.slice(0, length))) return text.slice(0, text.length - length);
      }
    }
    return text;
  }
}
