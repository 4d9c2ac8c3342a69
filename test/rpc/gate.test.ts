/**
 * The RPC socket's gate against a hostile peer in another process: raw Unix connections opened far
 * past MAX_RPC_PEERS_PER_SESSION and held. The runtime (this process) must hold at most the bound,
 * stop listening while full, say so once, and serve again once the peer lets go.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { Dealer } from "zeromq";
import { MAX_RPC_PEERS_PER_SESSION, RPC_FDS_PER_PEER, RouteTable, RpcServer } from "../../src/rpc/index.js";
import { makeRunDir, PYTHON, recordingLogger } from "./helpers.js";
import { poll } from "../support/poll.js";

/** Connections the hostile peer opens: four times the bound. */
const ATTEMPTS = 4 * MAX_RPC_PEERS_PER_SESSION;
/** Descriptors this process may open meanwhile for other reasons (the child's pipes, a timer's). */
const SLACK_FDS = 8;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Opens `count` connections to `path` and prints how many connected; then, for each line on stdin,
 * tries one more and prints "connected" or the error's name. Holds everything until stdin closes.
 */
function hostilePeer(path: string, count: number): { child: ChildProcessWithoutNullStreams; line: () => Promise<string> } {
  const code = [
    "import socket, sys",
    "held = []",
    "def attempt():",
    "    s = socket.socket(socket.AF_UNIX)",
    "    try:",
    `        s.connect(${JSON.stringify(path)})`,
    "    except OSError as e:",
    "        return type(e).__name__",
    "    held.append(s)",
    "    return 'connected'",
    `print(sum(attempt() == 'connected' for _ in range(${count})), flush=True)`,
    "for _ in sys.stdin:",
    "    print(attempt(), flush=True)",
  ].join("\n");
  const child = spawn(PYTHON, ["-c", code], { stdio: ["pipe", "pipe", "pipe"] });
  cleanups.push(() => void child.kill("SIGKILL"));
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      const next = waiting.shift();
      if (next) next(line);
      else lines.push(line);
    }
  });
  const line = () => new Promise<string>((resolve, reject) => {
    const ready = lines.shift();
    if (ready !== undefined) return resolve(ready);
    waiting.push(resolve);
    child.once("exit", (exit) => reject(new Error(`hostile peer exited (${exit}): ${child.stderr.read() ?? ""}`)));
  });
  return { child, line };
}

function ownFds(): number {
  return readdirSync("/proc/self/fd").length;
}

async function echo(endpoint: string, token: string): Promise<unknown> {
  const socket = new Dealer({ linger: 0, receiveTimeout: 10_000 });
  socket.connect(endpoint);
  try {
    await socket.send([token, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "echo", params: { n: 7 } })]);
    const [reply] = await socket.receive();
    return JSON.parse(reply!.toString());
  } finally {
    socket.close();
  }
}

describe("B K-4 the RPC socket holds at most MAX_RPC_PEERS_PER_SESSION connections", () => {
  it(`${ATTEMPTS} held connections from one process: the runtime keeps ${MAX_RPC_PEERS_PER_SESSION}, stops listening, logs once, and serves again when they close`, async () => {
    const run = makeRunDir();
    cleanups.push(run.remove);
    const { logger, entries } = recordingLogger();
    const server = new RpcServer({ runDir: run.dir, routes: RouteTable.of({ echo: async (params) => params }), logger });
    cleanups.push(() => server.close());
    await server.start();
    const before = ownFds();

    const peer = hostilePeer(server.socketPath, ATTEMPTS);
    expect(Number(await peer.line())).toBeGreaterThanOrEqual(MAX_RPC_PEERS_PER_SESSION);
    await poll(() => server.peerCount === MAX_RPC_PEERS_PER_SESSION, { what: "the gate to fill" });
    // Full, the gate does not listen: one more connect fails in the peer itself, waking nothing here.
    peer.child.stdin.write("more\n");
    expect(await peer.line()).toBe("FileNotFoundError");
    expect(existsSync(server.socketPath)).toBe(false);
    expect(server.peerCount).toBe(MAX_RPC_PEERS_PER_SESSION);
    expect(ownFds() - before).toBeLessThanOrEqual(MAX_RPC_PEERS_PER_SESSION * RPC_FDS_PER_PEER + SLACK_FDS);
    expect(entries.filter((e) => e.message.includes("MAX_RPC_PEERS_PER_SESSION"))).toEqual([
      expect.objectContaining({ level: "warn", fields: { max: MAX_RPC_PEERS_PER_SESSION } }),
    ]);

    peer.child.stdin.end();
    await poll(() => server.peerCount === 0 && existsSync(server.socketPath), { what: "the gate to drain and listen again" });
    expect(await echo(server.endpoint, server.token)).toEqual({ jsonrpc: "2.0", id: 1, result: { n: 7 } });
  });

  it("the bound is inclusive: a peer holding exactly MAX_RPC_PEERS_PER_SESSION - 1 leaves room for one more call", async () => {
    const run = makeRunDir();
    cleanups.push(run.remove);
    const server = new RpcServer({ runDir: run.dir, routes: RouteTable.of({ echo: async (params) => params }), logger: recordingLogger().logger });
    cleanups.push(() => server.close());
    await server.start();
    const peer = hostilePeer(server.socketPath, MAX_RPC_PEERS_PER_SESSION - 1);
    expect(await peer.line()).toBe(String(MAX_RPC_PEERS_PER_SESSION - 1));
    await poll(() => server.peerCount === MAX_RPC_PEERS_PER_SESSION - 1, { what: "the peer's connections to be relayed" });
    expect(await echo(server.endpoint, server.token)).toEqual({ jsonrpc: "2.0", id: 1, result: { n: 7 } });
  });
});
