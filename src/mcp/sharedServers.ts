/**
 * Servers shared by the sessions of one runtime (M-2): only entries that say `"shared": true`,
 * and only between sessions whose resolved server is the same (name, entry and launch, secrets
 * included). Reference-counted: the process stops when the last hub releases it.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../json/index.js";
import type { Log } from "../platform/index.js";
import type { McpClientInfo } from "./connection.js";
import { ManagedServer } from "./managedServer.js";
import type { ResolvedServer } from "./resolve.js";

/** Identifies a resolved server: two with the same key would start the same process the same way. */
export function serverKey(resolved: ResolvedServer): string {
  return createHash("sha256").update(canonicalJson({ name: resolved.name, hash: resolved.hash, launch: resolved.launch, tools: resolved.tools ?? null })).digest("hex");
}

interface Held {
  readonly server: ManagedServer;
  refs: number;
}

export interface SharedServersOptions {
  readonly log: Log;
  readonly clientInfo: McpClientInfo;
}

export class SharedServers {
  private readonly held = new Map<string, Held>();

  constructor(private readonly options: SharedServersOptions) {}

  /** The shared server for `resolved`, started when no hub holds it yet. Pair with release(). */
  acquire(resolved: ResolvedServer): ManagedServer {
    const key = serverKey(resolved);
    const found = this.held.get(key);
    if (found !== undefined && found.server.state !== "stopped") {
      found.refs += 1;
      return found.server;
    }
    const server = new ManagedServer(resolved, this.options);
    this.held.set(key, { server, refs: 1 });
    return server;
  }

  /** Drops one hold of `server`; the last one stops it. */
  async release(server: ManagedServer): Promise<void> {
    const key = serverKey(server.resolved);
    const found = this.held.get(key);
    if (found === undefined || found.server !== server) return server.stop();
    found.refs -= 1;
    if (found.refs > 0) return;
    this.held.delete(key);
    await server.stop();
  }

  /** How many hubs hold the server of `resolved` (0 when none runs). */
  holders(resolved: ResolvedServer): number {
    return this.held.get(serverKey(resolved))?.refs ?? 0;
  }

  /** Stops every shared server, whoever holds it (the runtime is shutting down). */
  async close(): Promise<void> {
    const all = [...this.held.values()];
    this.held.clear();
    await Promise.all(all.map((item) => item.server.stop()));
  }
}
