/**
 * The web console's logins: a one-time code in the link `albedo web` opens, exchanged once for a
 * random cookie value. Neither is the daemon's token, so the token never reaches a browser, and
 * each lives in memory only: a restarted daemon forgets every login. Both are kept by their SHA-256,
 * so a lookup is one map read and its timing says nothing about how close a guess came.
 */
import { createHash, randomBytes } from "node:crypto";
import { LOGIN_CODE_TTL_MS, MAX_PENDING_LOGIN_CODES, MAX_WEB_SESSIONS, WEB_SESSION_IDLE_MS } from "./limits.js";

/** Random bytes in a login code and in a login's cookie value (hex, so twice as many characters). */
const SECRET_BYTES = 32;
/** The cookie that carries a login. */
export const WEB_COOKIE = "albedo_web";

export interface IssuedLogin {
  readonly code: string;
  readonly expiresAt: number;
}

/** The key a secret is kept under. */
const digest = (secret: string): string => createHash("sha256").update(secret).digest("hex");

export class WebLogins {
  /** Code digest → when it stops working; oldest first. */
  private readonly codes = new Map<string, number>();
  /** Cookie value digest → when it was last used; least recently used first. */
  private readonly logins = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new one-time code, valid for LOGIN_CODE_TTL_MS. */
  issue(): IssuedLogin {
    this.sweep();
    while (this.codes.size >= MAX_PENDING_LOGIN_CODES) this.codes.delete(this.codes.keys().next().value!);
    const code = randomBytes(SECRET_BYTES).toString("hex");
    const expiresAt = this.now() + LOGIN_CODE_TTL_MS;
    this.codes.set(digest(code), expiresAt);
    return { code, expiresAt };
  }

  /** The cookie value for a code used for the first time within its life; undefined for any other code. */
  redeem(code: string): string | undefined {
    this.sweep();
    if (!this.codes.delete(digest(code))) return undefined;
    while (this.logins.size >= MAX_WEB_SESSIONS) this.logins.delete(this.logins.keys().next().value!);
    const cookie = randomBytes(SECRET_BYTES).toString("hex");
    this.logins.set(digest(cookie), this.now());
    return cookie;
  }

  /** Whether `cookie` is a live login; using it keeps it alive for WEB_SESSION_IDLE_MS more. */
  check(cookie: string | undefined): boolean {
    if (cookie === undefined) return false;
    this.sweep();
    const key = digest(cookie);
    // Deleted and set again, so the map stays in order of last use.
    if (!this.logins.delete(key)) return false;
    this.logins.set(key, this.now());
    return true;
  }

  /** Ends a login (logout); unknown values are ignored. */
  revoke(cookie: string | undefined): void {
    if (cookie !== undefined) this.logins.delete(digest(cookie));
  }

  private sweep(): void {
    const now = this.now();
    for (const [code, expiresAt] of this.codes) if (expiresAt <= now) this.codes.delete(code);
    for (const [cookie, used] of this.logins) if (used + WEB_SESSION_IDLE_MS <= now) this.logins.delete(cookie);
  }
}

/** The value of cookie `name` in a Cookie header; undefined when absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
