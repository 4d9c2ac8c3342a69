/**
 * The web console's own paths: the page and its files, and the login link, which is the page
 * itself (the page trades the code in its fragment through POST /web/login). Everything the page
 * shows and does goes through the public API with its login's page secret and cookie. Host and
 * Origin are checked on each of these as on the API (DNS rebinding).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { checkLocalOrigin } from "./origins.js";
import { HttpProblem, problemOf, sendBytes, sendProblem } from "./problem.js";
import { WEB_CONTENT_SECURITY_POLICY, type WebAssets } from "./webAssets.js";
import { WEB_LOGIN_PATH } from "../api/index.js";

/** The paths that serve the page itself. */
const PAGE_PATHS: ReadonlySet<string> = new Set(["/", WEB_LOGIN_PATH]);

/** Headers every answer of the console carries: its policy, no sniffing, no framing, no referrer. */
const PAGE_HEADERS = {
  "content-security-policy": WEB_CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
} as const;

export class WebEndpoint {
  constructor(private readonly assets: WebAssets) {}

  /** Whether a request is for the console rather than the API. */
  static owns(req: IncomingMessage): boolean {
    const path = pathOf(req);
    return req.method === "GET" && (PAGE_PATHS.has(path) || path.startsWith("/assets/"));
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    try {
      checkLocalOrigin(req);
      const url = new URL(req.url ?? "/", "http://albedo.invalid");
      const asset = this.assets.get(PAGE_PATHS.has(url.pathname) ? "/" : url.pathname);
      if (asset === undefined) {
        if (PAGE_PATHS.has(url.pathname)) throw new HttpProblem("not_found", "the web console is not built in this install: run `npm run build` where albedo is installed");
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
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}
