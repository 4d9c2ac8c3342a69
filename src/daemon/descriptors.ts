/**
 * Whether the daemon's open-file limit covers what it may hold at its bounds (B). Node raises the
 * soft limit to the hard one as it starts, so the hard limit is what the daemon gets; what it may
 * hold is bounded by its connection cap and, per session, by the RPC gate (MAX_RPC_PEERS_PER_SESSION).
 */
import { ownLimit, type Log, type ResourceLimit } from "../platform/index.js";
import { MAX_RPC_PEERS_PER_SESSION, RPC_FDS_PER_PEER } from "../rpc/index.js";
import { DAEMON_BASE_FDS, MAX_CONNECTIONS, SESSION_BASE_FDS } from "./limits.js";

/** Descriptors the daemon may hold with `sessions` sessions open, each with a full RPC gate, and MAX_CONNECTIONS clients. */
export function descriptorsAtBounds(sessions: number): number {
  return DAEMON_BASE_FDS + MAX_CONNECTIONS + sessions * (SESSION_BASE_FDS + MAX_RPC_PEERS_PER_SESSION * RPC_FDS_PER_PEER);
}

/** Logs a warning when the open-file limit is below descriptorsAtBounds(sessions); returns whether it did. */
export function warnOnFewDescriptors(log: Log | undefined, sessions: number, limit: ResourceLimit | undefined = ownLimit("openFiles")): boolean {
  const needed = descriptorsAtBounds(sessions);
  if (limit === undefined || limit.soft >= needed) return false;
  log?.("warn", `open-file limit ${limit.soft} is below the ${needed} descriptors the daemon may hold with ${sessions} sessions at their bounds; past it new sessions and connections fail. Raise it (ulimit -n, or LimitNOFILE= in a systemd unit)`, { limit: limit.soft, needed, sessions });
  return true;
}
