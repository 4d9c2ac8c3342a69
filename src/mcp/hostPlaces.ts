/**
 * The places a session's MCP servers are judged and started by: what its kernel can write, the
 * neutral working directory of global servers, and the sandbox of project servers. A session builds
 * them from its own places; the CLI's one-off starts (`albedo mcp prompt`, `mcp list`) from the ones
 * a session opened here would have.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { KernelWrites, type ServerSandboxPlaces } from "../sandbox/index.js";

/** Under the state dir: the empty directory global servers start in (no kernel sees the state dir). */
export const MCP_NEUTRAL_DIR = "mcp-cwd";

export interface McpHostPlaces {
  readonly writes: KernelWrites;
  readonly neutralDir: string;
  /** Set when project servers run in a sandbox of their own: whenever the session's kernel is sandboxed. */
  readonly sandbox?: ServerSandboxPlaces;
}

export interface McpHostInput {
  readonly workspace: string;
  readonly stateDir: string;
  readonly home: string;
  /** The session's run dir; without a session, the directory every run dir lives in. */
  readonly runDir: string;
  /** Whether the session's kernel runs sandboxed. */
  readonly sandboxed: boolean;
}

/** The places of one session (or of a session that would open with `input`); makes the neutral directory. */
export function mcpHostPlaces(input: McpHostInput): McpHostPlaces {
  const neutralDir = join(input.stateDir, MCP_NEUTRAL_DIR);
  mkdirSync(neutralDir, { recursive: true, mode: 0o700 });
  const writes = new KernelWrites({ workspace: input.workspace, runDir: input.runDir, stateDir: input.stateDir });
  const sandbox = input.sandboxed ? { workspace: input.workspace, stateDir: input.stateDir, home: input.home } : undefined;
  return { writes, neutralDir, ...(sandbox ? { sandbox } : {}) };
}
