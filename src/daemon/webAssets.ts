/**
 * The web console's built files (Vite's output), read once when the daemon starts and served from
 * memory: a URL path only ever selects one of the files read then, so no request names a path on
 * disk. Files under assets/ carry a content hash in their name and are cached for good; the page
 * itself is revalidated each time.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { MAX_WEB_ASSET_BYTES, MAX_WEB_ASSETS } from "./limits.js";

/** Media types of what Vite writes; anything else is not served. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

/** The page's policy: its own scripts and styles only (no inline script, no eval), images from itself, data URLs or the blobs it fetched with its login, nothing framed. */
export const WEB_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export interface WebAsset {
  readonly contentType: string;
  readonly bytes: Buffer;
  /** Named by content hash: cache it for good. */
  readonly immutable: boolean;
}

/** The built console: URL path (`/`, `/assets/index-abc.js`) → file. Empty when the console is not built. */
export type WebAssets = ReadonlyMap<string, WebAsset>;

/** Reads `dir` (at most MAX_WEB_ASSETS files of MAX_WEB_ASSET_BYTES each; symlinks and other types skipped); an absent dir gives no assets. */
export async function loadWebAssets(dir: string): Promise<WebAssets> {
  const assets = new Map<string, WebAsset>();
  const walk = async (at: string): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (assets.size >= MAX_WEB_ASSETS) return;
      const file = join(at, entry.name);
      if (entry.isDirectory()) await walk(file);
      else if (entry.isFile()) {
        const contentType = MEDIA_TYPES[extname(entry.name)];
        if (contentType === undefined || (await stat(file)).size > MAX_WEB_ASSET_BYTES) continue;
        const path = `/${relative(dir, file).split(sep).join("/")}`;
        assets.set(path === "/index.html" ? "/" : path, { contentType, bytes: await readFile(file), immutable: path.startsWith("/assets/") });
      }
    }
  };
  await walk(dir);
  return assets;
}
