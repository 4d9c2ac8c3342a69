import { afterEach, describe, expect, it } from "vitest";
import { RouteTable, RpcServer } from "../../src/rpc/index.js";
import { kernelEnv, lastJson, makeRunDir, runPython } from "./helpers.js";

/**
 * libzmq signals a socket's descriptor on an edge, and any operation on the socket (a send, a read,
 * a look at EVENTS) may consume that edge. An awaiting loop that misses it sleeps until some other
 * event comes; here nothing else comes but the call's own deadline, which would then answer
 * RpcTimeout. So each test passes only if the reply alone woke the loop.
 */

/** The kernel's deadline per call: the only other event on the test's loop. */
const CLIENT_DEADLINE_MS = 10_000;
/** How long the runtime holds a reply back, so the loop is asleep when it comes. */
const HOLD_MS = 300;
/** Calls whose replies are sent in one burst. */
const BURST = 20;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(routes: RouteTable): Promise<RpcServer> {
  const run = makeRunDir();
  cleanups.push(run.remove);
  const server = new RpcServer({ runDir: run.dir, routes, logger: () => {} });
  cleanups.push(() => server.close());
  await server.start();
  return server;
}

const catalog = async () => ({ commands: [] });

describe("K-4 an awaiting kernel loop wakes on its replies alone", () => {
  it("reads a reply that arrives while the loop sleeps", async () => {
    const server = await startServer(RouteTable.of({
      "commands.catalog": catalog,
      "skills.read": (params) => new Promise((resolve) => setTimeout(() => resolve({ name: params.name }), HOLD_MS)),
    }));
    const result = await runPython(`
import asyncio, json, albedo
async def main():
    return await albedo.skills.read("held")
print(json.dumps(asyncio.run(main())))`, kernelEnv(server, { deadlineMs: CLIENT_DEADLINE_MS }));
    expect(lastJson(result)).toEqual({ name: "held" });
  });

  it("reads every reply of a burst, though the descriptor fired once for all of them", async () => {
    const held: (() => void)[] = [];
    const server = await startServer(RouteTable.of({
      "commands.catalog": catalog,
      "skills.read": (params) => new Promise((resolve) => {
        held.push(() => resolve({ limit: params.limit }));
        // All replies leave in one tick, once every call is in.
        if (held.length === BURST) setTimeout(() => held.splice(0).forEach((answer) => answer()), HOLD_MS);
      }),
    }));
    const result = await runPython(`
import asyncio, json, albedo
async def main():
    pages = await asyncio.gather(*[albedo.skills.read("x", limit=i + 1) for i in range(${BURST})])
    return [page["limit"] for page in pages]
print(json.dumps(asyncio.run(main())))`, kernelEnv(server, { deadlineMs: CLIENT_DEADLINE_MS }));
    expect(lastJson(result)).toEqual(Array.from({ length: BURST }, (_, i) => i + 1));
  });

  it("reads a reply whose edge a later send on the same socket consumed", async () => {
    // The first call is answered at once; its reply lands while the loop is blocked in sync code;
    // then a second call goes out on the same socket (its send takes the edge) and is never answered.
    const server = await startServer(RouteTable.of({
      "commands.catalog": catalog,
      "skills.read": async (params) => ({ name: params.name }),
      "skills.list": () => new Promise(() => {}),
    }));
    const result = await runPython(`
import asyncio, json, time, albedo
from albedo._transport import encode_within, new_request
async def main():
    endpoint = albedo._session.channel.listen(asyncio.get_running_loop())
    first_id, first = new_request("skills.read", {"name": "answered"}, None)
    answered = endpoint.request(first_id, encode_within(first, 1 << 20), ${CLIENT_DEADLINE_MS / 1000})
    time.sleep(${HOLD_MS / 1000})
    second_id, second = new_request("skills.list", {}, None)
    endpoint.request(second_id, encode_within(second, 1 << 20), ${CLIENT_DEADLINE_MS / 1000})
    reply = await answered
    return reply and reply.get("result")
albedo.skills
print(json.dumps(asyncio.run(main())))`, kernelEnv(server, { deadlineMs: CLIENT_DEADLINE_MS }));
    expect(lastJson(result)).toEqual({ name: "answered" });
  });
});
