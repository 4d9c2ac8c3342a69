/**
 * The web console's logins. A login is two secrets that must arrive together: the page secret,
 * which the page keeps in its origin's sessionStorage and sends as a header, and a cookie the
 * browser sends. Browsers send a cookie of 127.0.0.1 to every port of 127.0.0.1, so any other
 * local server a user visits receives it, and any of them can replace it; no program but the page
 * can read the page secret. So neither alone opens the API, and a cookie that another port replaced
 * or pushed out is issued again to the page that proves its secret (the login survives cookie
 * tossing). A one-time code in the link `albedo web` opens is traded for both. None of them is the
 * daemon's token, each lives in memory only (a restarted daemon forgets every login), and each is
 * kept by its SHA-256, so a lookup is one map read and its timing says nothing about a guess.
 */
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { LOGIN_CODE_TTL_MS, MAX_PENDING_LOGIN_CODES, MAX_WEB_SESSIONS, WEB_SESSION_IDLE_MS } from "./limits.js";
import { WEB_PAGE_HEADER, WEB_PAGE_PROTOCOL_PREFIX } from "../api/index.js";

/** Random bytes in a login code, a page secret and a cookie value (hex, so twice as many characters). */
const SECRET_BYTES = 32;
/** A page secret as it travels: lowercase hex of SECRET_BYTES. */
const SECRET_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The login cookie's name on the daemon listening on `port`. Cookies ignore ports, so the port in
 * the name keeps two daemons' logins apart (Jupyter Server names its cookie the same way).
 */
export const webCookieName = (port: number): string => `albedo_web_${port}`;

export interface IssuedLogin {
  readonly code: string;
  readonly expiresAt: number;
}

/** What a redeemed code gives: the page's secret (the answer's body) and the cookie (Set-Cookie). */
export interface WebLogin {
  readonly page: string;
  readonly cookie: string;
}

/**
 * Who a request is, by its page secret and cookies: `login` when both belong to one live login;
 * `cookie_lost` when the page secret is live but no cookie sent is that login's (another program
 * replaced or removed it); `none` otherwise.
 */
export type WebCheck = "login" | "cookie_lost" | "none";

interface Login {
  /** SHA-256 of the cookie value the login's browser must send. */
  cookie: string;
  /** When the login was last used. */
  used: number;
}

/** The key a secret is kept under. */
const digest = (secret: string): string => createHash("sha256").update(secret).digest("hex");
const fresh = (): string => randomBytes(SECRET_BYTES).toString("hex");

export class WebLogins {
  /** Code digest → when it stops working; oldest first. */
  private readonly codes = new Map<string, number>();
  /** Page secret digest → its login; least recently used first. */
  private readonly logins = new Map<string, Login>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new one-time code, valid for LOGIN_CODE_TTL_MS. */
  issue(): IssuedLogin {
    this.sweep();
    while (this.codes.size >= MAX_PENDING_LOGIN_CODES) this.codes.delete(this.codes.keys().next().value!);
    const code = fresh();
    const expiresAt = this.now() + LOGIN_CODE_TTL_MS;
    this.codes.set(digest(code), expiresAt);
    return { code, expiresAt };
  }

  /** A new login for a code used for the first time within its life; undefined for any other code. */
  redeem(code: string): WebLogin | undefined {
    this.sweep();
    if (!this.codes.delete(digest(code))) return undefined;
    while (this.logins.size >= MAX_WEB_SESSIONS) this.logins.delete(this.logins.keys().next().value!);
    const login = { page: fresh(), cookie: fresh() };
    this.logins.set(digest(login.page), { cookie: digest(login.cookie), used: this.now() });
    return login;
  }

  /**
   * Checks a page secret against the cookie values sent under the login cookie's name (every one of
   * them: another port may have added its own under the same name with a longer path, which the
   * browser sends first). A live login is kept alive for WEB_SESSION_IDLE_MS more.
   */
  check(page: string | undefined, cookies: readonly string[]): WebCheck {
    const login = this.touch(page);
    if (login === undefined) return "none";
    return cookies.some((value) => digest(value) === login.cookie) ? "login" : "cookie_lost";
  }

  /** A new cookie value for the login of `page`, the old one void; undefined when `page` is no live login. */
  renewCookie(page: string | undefined): string | undefined {
    const login = this.touch(page);
    if (login === undefined) return undefined;
    const cookie = fresh();
    login.cookie = digest(cookie);
    return cookie;
  }

  /** Ends the login of `page` (logout); unknown values are ignored. */
  revoke(page: string | undefined): void {
    if (page !== undefined) this.logins.delete(digest(page));
  }

  /** The live login of `page`, moved to the end of the map (most recently used); undefined for anything else. */
  private touch(page: string | undefined): Login | undefined {
    if (page === undefined || !SECRET_PATTERN.test(page)) return undefined;
    this.sweep();
    const key = digest(page);
    const login = this.logins.get(key);
    if (login === undefined) return undefined;
    this.logins.delete(key);
    login.used = this.now();
    this.logins.set(key, login);
    return login;
  }

  private sweep(): void {
    const now = this.now();
    for (const [code, expiresAt] of this.codes) if (expiresAt <= now) this.codes.delete(code);
    for (const [page, login] of this.logins) if (login.used + WEB_SESSION_IDLE_MS <= now) this.logins.delete(page);
  }
}

/** Every value of cookie `name` in a Cookie header, in the order sent (a browser sends several when paths differ). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (header === undefined) return [];
  const values: string[] = [];
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/**
 * The page secret a request carries: the header, or on a WebSocket upgrade the offered subprotocol
 * `albedo.page.SECRET`; undefined when there is none.
 */
export function presentedPageSecret(headers: { readonly [name: string]: string | string[] | undefined }): string | undefined {
  const header = headers[WEB_PAGE_HEADER];
  if (typeof header === "string") return header.trim();
  const offered = headers["sec-websocket-protocol"];
  if (typeof offered !== "string") return undefined;
  for (const protocol of offered.split(",")) {
    const trimmed = protocol.trim();
    if (trimmed.startsWith(WEB_PAGE_PROTOCOL_PREFIX)) return trimmed.slice(WEB_PAGE_PROTOCOL_PREFIX.length);
  }
  return undefined;
}

/** Who `req` is to `logins` (WebCheck); `none` without logins, or over a Unix socket, which no browser reaches. */
export function checkWebLogin(req: IncomingMessage, logins: WebLogins | undefined): WebCheck {
  const port = req.socket.localPort;
  if (logins === undefined || port === undefined) return "none";
  return logins.check(presentedPageSecret(req.headers), cookieValues(req.headers.cookie, webCookieName(port)));
}

/** The Set-Cookie value that gives the browser a login's cookie (or, with an empty value, takes it away). */
export function loginCookieHeader(port: number, value: string): string {
  const expiry = value === "" ? "; Max-Age=0" : "";
  return `${webCookieName(port)}=${value}; HttpOnly; SameSite=Strict; Path=/${expiry}`;
}
