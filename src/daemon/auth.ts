import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Random bytes in a bearer token (hex-encoded, so twice as many characters). */
export const TOKEN_BYTES = 32;

/** A fresh random bearer token. */
export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString("hex");
}

/**
 * The token a request presents: `Authorization: Bearer <token>`, or `?token=` (for WebSocket
 * clients that cannot set headers); undefined when neither is there.
 */
export function presentedToken(req: IncomingMessage, url: URL, allowQuery: boolean): string | undefined {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match) return match[1];
  return allowQuery ? (url.searchParams.get("token") ?? undefined) : undefined;
}

/** Whether `presented` equals `expected`, compared in constant time (digests equalise the lengths). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
