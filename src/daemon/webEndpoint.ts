/**
 * The web console's own paths: the page and its files, and the login link. Everything the page
 * shows and does goes through the public API (logout included: POST /web/logout), which takes its
 * login cookie as well as the bearer token. Host and Origin are checked on each of these as on the
 * API (DNS rebinding).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { checkLocalOrigin } from "./origins.js";
import { HttpProblem, problemOf, sendBytes, sendProblem } from "./problem.js";
import { WEB_CONTENT_SECURITY_POLICY, type WebAssets } from "./webAssets.js";
import { cookieValue, WEB_COOKIE, type WebLogins } from "./webLogins.js";

/** The path of the one-time login link: `/login?code=…`. */
export const LOGIN_PATH = "/login";

/** Headers every answer of the console carries: its policy, no sniffing, no framing, no referrer. */
const PAGE_HEADERS = {
  "content-security-policy": WEB_CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
} as const;

export class WebEndpoint {
  constructor(
    private readonly logins: WebLogins,
    private readonly assets: WebAssets,
  ) {}

  /** Whether a request is for the console rather than the API. */
  static owns(req: IncomingMessage): boolean {
    const path = pathOf(req);
    return req.method === "GET" && (path === "/" || path === LOGIN_PATH || path.startsWith("/assets/"));
  }

  /** Whether the request carries a live login cookie (the API's second way in, besides the bearer token). */
  authenticates(req: IncomingMessage): boolean {
    return this.logins.check(cookieValue(req.headers.cookie, WEB_COOKIE));
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      checkLocalOrigin(req);
      const url = new URL(req.url ?? "/", "http://albedo.invalid");
      if (url.pathname === LOGIN_PATH) return this.login(url, res);
      const asset = this.assets.get(url.pathname);
      if (asset === undefined) {
        if (url.pathname === "/") throw new HttpProblem("not_found", "the web console is not built in this install: run `npm run build` where albedo is installed");
        throw new HttpProblem("not_found", `no file ${url.pathname.slice(0, 200)} in the web console`);
      }
      sendBytes(res, 200, asset.contentType, asset.bytes, {
        ...PAGE_HEADERS,
        "cache-control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
      });
    } catch (error) {
      sendProblem(res, problemOf(error));
    }
  }

  private login(url: URL, res: ServerResponse): void {
    const code = url.searchParams.get("code") ?? "";
    const cookie = this.logins.redeem(code);
    if (cookie === undefined) throw new HttpProblem("unauthorized", "this login link was used already or has expired; run `albedo web` for a new one");
    // The link's code is spent; the redirect leaves it out of the address bar and the history's last entry.
    res.writeHead(303, { ...PAGE_HEADERS, location: "/", "cache-control": "no-store", "set-cookie": `${WEB_COOKIE}=${cookie}; HttpOnly; SameSite=Strict; Path=/` });
    res.end();
  }
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}
