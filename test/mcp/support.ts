/** What the MCP client tests share: the real servers they start, and hubs closed after each test. */
import { join, resolve } from "node:path";
import { McpApprovals, McpHub, mcpHostPlaces, resolveServers, type McpHostPlaces, type McpHubOptions, type McpServerEntry, type ResolvedServers } from "../../src/mcp/index.js";
import type { Log } from "../../src/platform/index.js";
import { installDir } from "../../src/platform/index.js";
import type { TempDirs } from "../support/tempDirs.js";

/** The Node reference server (stdio by default). */
export const EVERYTHING = resolve("node_modules/.bin/mcp-server-everything");
/** The managed venv's Python (`npm install` makes it): the raw server needs nothing but the standard library. */
export const PYTHON = join(installDir(), ".venv", "bin", "python");
export const RAW_SERVER = resolve("test/mcp/servers/raw_server.py");

/** A stdio entry of the raw hostile server in `mode`. */
export function raw(mode: string, extra: Partial<McpServerEntry> = {}): McpServerEntry {
  return { command: PYTHON, args: [RAW_SERVER, mode], ...extra } as McpServerEntry;
}

/** A log that keeps every line, for assertions (bounds, secrets). */
export function logSink(): { readonly log: Log; readonly lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (level, message, data) => lines.push(`${level} ${message} ${data === undefined ? "" : JSON.stringify(data)}`) };
}

const placesByWorkspace = new Map<string, McpHostPlaces>();

/** The places of an unsandboxed session on `workspace` (its state dir, home and run dir new temp dirs), the same for each call with that workspace, as a session's are. */
export function hostPlaces(temps: TempDirs, workspace: string): McpHostPlaces {
  let places = placesByWorkspace.get(workspace);
  if (places === undefined) {
    places = mcpHostPlaces({ workspace, stateDir: temps.make(), home: temps.make(), runDir: temps.make(), sandboxed: false });
    placesByWorkspace.set(workspace, places);
  }
  return places;
}

/** The servers of a global section, resolved as a session in `workspace` would (by default a new temp dir; the state dir is one). */
export async function resolved(temps: TempDirs, servers: Record<string, McpServerEntry>, env: NodeJS.ProcessEnv = process.env, workspace = temps.make()): Promise<ResolvedServers> {
  const approvals = await McpApprovals.load(temps.make(), workspace);
  return resolveServers({ ...hostPlaces(temps, workspace), global: { servers }, workspace, approvals, env });
}

/** Hubs made by a test file, all closed by closeAll() (call it in afterEach). */
export function hubs() {
  const made: McpHub[] = [];
  return {
    make(options: Partial<McpHubOptions> = {}): McpHub {
      const hub = new McpHub({ log: options.log ?? (() => undefined), ...options });
      made.push(hub);
      return hub;
    },
    async closeAll(): Promise<void> {
      await Promise.all(made.splice(0).map((hub) => hub.close()));
    },
  };
}

/** A signal that never aborts. */
export const NEVER = new AbortController().signal;
