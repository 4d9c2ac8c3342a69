import { describe, expect, it } from "vitest";
import { descriptorsAtBounds, warnOnFewDescriptors } from "../../src/daemon/descriptors.js";
import { DAEMON_BASE_FDS, MAX_CONNECTIONS, MAX_SESSIONS, SESSION_BASE_FDS } from "../../src/daemon/limits.js";
import { MAX_RPC_PEERS_PER_SESSION, RPC_FDS_PER_PEER } from "../../src/rpc/index.js";

describe("B D-1 the daemon says at start when its open-file limit cannot hold its sessions at their bounds", () => {
  const needed = descriptorsAtBounds(MAX_SESSIONS);

  it("counts the daemon's own, MAX_CONNECTIONS clients and each session's full RPC gate", () => {
    expect(needed).toBe(DAEMON_BASE_FDS + MAX_CONNECTIONS + MAX_SESSIONS * (SESSION_BASE_FDS + MAX_RPC_PEERS_PER_SESSION * RPC_FDS_PER_PEER));
  });

  it("warns one below the bound, naming the limit and what it needs; not at it", () => {
    const lines: string[] = [];
    const log = (_level: string, message: string) => void lines.push(message);
    expect(warnOnFewDescriptors(log, MAX_SESSIONS, { soft: needed, hard: needed })).toBe(false);
    expect(warnOnFewDescriptors(log, MAX_SESSIONS, { soft: needed - 1, hard: needed })).toBe(true);
    expect(lines).toEqual([expect.stringContaining(`open-file limit ${needed - 1} is below the ${needed} descriptors`)]);
    expect(warnOnFewDescriptors(log, MAX_SESSIONS, undefined)).toBe(false);
  });
});
