/** `skill://NAME/PATH` resource addresses (P-4): a skill's file, optionally from a byte offset (`?offset=N`). */
import { extname } from "node:path";

/** The address of `path` in skill `skill`; `offset` for the page that starts there. */
export function skillUri(skill: string, path: string, offset?: number): string {
  const encoded = path.split("/").map(encodeURIComponent).join("/");
  return `skill://${encodeURIComponent(skill)}/${encoded}${offset ? `?offset=${offset}` : ""}`;
}

/** The skill, path and offset an address names, or why it names none. */
export function parseSkillUri(uri: string): { skill: string; path: string; offset: number } | string {
  const match = /^skill:\/\/([^/?#]+)\/([^?#]+)(?:\?offset=(\d{1,15}))?$/.exec(uri);
  if (match === null) return `"${uri.slice(0, 200)}" is not a skill resource: albedo's resources are skill://NAME/PATH, optionally ?offset=N`;
  try {
    return { skill: decodeURIComponent(match[1]!), path: match[2]!.split("/").map(decodeURIComponent).join("/"), offset: match[3] === undefined ? 0 : Number(match[3]) };
  } catch {
    return `"${uri.slice(0, 200)}" has a bad %-escape`;
  }
}

const MIMES: Readonly<Record<string, string>> = {
  ".md": "text/markdown", ".txt": "text/plain", ".py": "text/x-python", ".json": "application/json", ".yaml": "application/yaml",
  ".yml": "application/yaml", ".sh": "text/x-shellscript", ".js": "text/javascript", ".ts": "text/plain", ".html": "text/html",
  ".csv": "text/csv", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
  ".pdf": "application/pdf", ".svg": "image/svg+xml",
};

/** The MIME type a client is told for `path`, by its extension. */
export function resourceMime(path: string): string {
  return MIMES[extname(path).toLowerCase()] ?? "application/octet-stream";
}
