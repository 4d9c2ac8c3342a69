/** What albedo's MCP server needs from the session it serves: a view of the session's port. */
import type { SessionPort } from "../session/index.js";

/**
 * The session's identity and current view (its snapshot: the enabled skills; its commands), its
 * kernel, its skills' files through the guarded access (C-5, R-1, R-2), `/reload session` (K-7),
 * the catalog's swaps, and its status (the python tool's description says whether it is sandboxed).
 */
export type ServedSession = Pick<SessionPort, "id" | "workspace" | "view" | "kernel" | "skills" | "reload" | "catalog" | "status">;
