import { afterEach, describe, expect, it } from "vitest";
import { RPC_MAX_PENDING_CALLS, RouteTable, RpcServer } from "../../src/rpc/index.js";
import { type FakeCall, declaration, fakeRoutes } from "./fake-session.js";
import { kernelEnv, lastJson, makeRunDir, runPython } from "./helpers.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(routes: RouteTable, callTimeoutMs?: number): Promise<RpcServer> {
  const run = makeRunDir();
  cleanups.push(run.remove);
  const server = new RpcServer({ runDir: run.dir, routes, callTimeoutMs, logger: () => {} });
  cleanups.push(() => server.close());
  await server.start();
  return server;
}

const PRELUDE = `
import asyncio, inspect, json, sys
import albedo
def out(value):
    print(json.dumps(value))
def caught(fn, *args):
    try:
        fn(*args)
    except albedo.AlbedoError as e:
        return {"type": type(e).__name__, "code": e.code, "rpc_code": e.rpc_code, "message": e.message, "data": e.data}
    return None
`;

describe("K-4 sync calls from a plain script", () => {
  it("skills and commands block and return results, sending the declared parameter names", async () => {
    const calls: FakeCall[] = [];
    const server = await startServer(fakeRoutes([declaration("/demo")], calls));
    const result = await runPython(
      `${PRELUDE}
from albedo import skills, commands
out({
  "list": skills.list()["method"],
  "read": skills.read("demo")["params"],
  "page": skills.read("demo", "ref/a.md", offset=5, limit=10)["params"],
  "resources": skills.resources("demo")["params"],
  "catalog": [c["name"] for c in commands.catalog()["commands"]],
  "raw": commands.invoke("/demo", "a  b ")["arguments"],
  "dict": commands.invoke("/demo", {"text": "x"})["arguments"],
})`,
      kernelEnv(server),
    );
    expect(lastJson(result)).toEqual({
      list: "skills.list",
      read: { name: "demo", resource: "SKILL.md", offset: 0, limit: 16384 },
      page: { name: "demo", resource: "ref/a.md", offset: 5, limit: 10 },
      resources: { name: "demo" },
      catalog: ["/demo"],
      raw: "a  b ",
      dict: { text: "x" },
    });
    expect(calls.every((c) => c.context.cell === undefined)).toBe(true);
  });

  it("raises typed exceptions carrying code, number, message and data", async () => {
    const server = await startServer(fakeRoutes([], []));
    const result = await runPython(`${PRELUDE}\nout(caught(albedo.commands.invoke, "/missing"))`, kernelEnv(server));
    expect(lastJson(result)).toEqual({
      type: "NotFound",
      code: "not_found",
      rpc_code: -32002,
      message: "no command /missing in this session",
      data: { name: "/missing" },
    });
  });

  it("maps a server timeout to RpcTimeout and a wrong token to Forbidden", async () => {
    const never = RouteTable.of({ "commands.catalog": async () => ({ commands: [] }), "skills.list": () => new Promise(() => {}) });
    const server = await startServer(never, 200);
    const timedOut = await runPython(`${PRELUDE}\nout(caught(albedo.skills.list))`, kernelEnv(server));
    expect(lastJson(timedOut)).toMatchObject({ type: "RpcTimeout", code: "timeout", rpc_code: -32007 });
    const wrong = await runPython(
      `${PRELUDE}\nout(caught(albedo.skills.list))`,
      kernelEnv(server, { token: "0".repeat(64) }),
    );
    expect(lastJson(wrong)).toMatchObject({ type: "Forbidden", code: "forbidden" });
  });

  it("gives up on its own after the client deadline when the runtime never answers", async () => {
    const never = RouteTable.of({ "commands.catalog": async () => ({ commands: [] }), "skills.list": () => new Promise(() => {}) });
    const server = await startServer(never, 60_000);
    const env = kernelEnv(server, { deadlineMs: 300 });
    const result = await runPython(
      `${PRELUDE}
async def both():
    try:
        await albedo.skills.list()
    except albedo.RpcTimeout as e:
        return e.message
out({"sync": caught(albedo.skills.list)["message"], "async": asyncio.run(both())})`,
      env,
    );
    expect(lastJson(result)).toEqual({
      sync: expect.stringContaining("no answer from the runtime within 0.3 s"),
      async: expect.stringContaining("no answer from the runtime within 0.3 s"),
    });
  });

  it("refuses an oversized call locally and surfaces the server's limit_exceeded when the local cap is raised", async () => {
    const server = await startServer(fakeRoutes([declaration("/demo")], []));
    const code = `${PRELUDE}\nout(caught(albedo.commands.invoke, "/demo", "x" * (2 * 1024 * 1024)))`;
    const local = lastJson(await runPython(code, kernelEnv(server)));
    expect(local).toMatchObject({ type: "LimitExceeded", data: { limit: "RPC_MAX_MESSAGE_BYTES", max: 1048576 } });
    const raised = kernelEnv(server, { maxMessageBytes: 4 * 1024 * 1024 });
    const remote = lastJson(await runPython(code, raised));
    expect(remote).toMatchObject({ type: "LimitExceeded", rpc_code: -32004, data: { max: 1048576 } });
  });

  it("explains what is missing when the endpoint and token are not set", async () => {
    const result = await runPython(
      `${PRELUDE}
try:
    from albedo import skills
except ImportError as e:
    out({"error": str(e)})`,
      { ALBEDO_RPC_ENDPOINT: "", ALBEDO_RPC_TOKEN: "" },
    );
    expect(lastJson(result).error).toContain("ALBEDO_RPC_ENDPOINT and ALBEDO_RPC_TOKEN are not set");
  });
});

describe("K-4 async calls", () => {
  it("inside a running loop methods return awaitables that run concurrently", async () => {
    const server = await startServer(fakeRoutes([declaration("/demo")], []));
    const result = await runPython(
      `${PRELUDE}
async def main():
    pending = albedo.skills.list()
    assert inspect.isawaitable(pending)
    first, second = await asyncio.gather(pending, albedo.commands.invoke("/demo", "x"))
    return [first["method"], second["invoked"]]
out(asyncio.run(main()))`,
      kernelEnv(server),
    );
    expect(lastJson(result)).toEqual(["skills.list", "/demo"]);
  });

  it("each event loop gets its own socket, and a loop started after another closed still gets answers", async () => {
    const server = await startServer(fakeRoutes([declaration("/demo")], []));
    const result = await runPython(
      `${PRELUDE}
async def one(i):
    return (await albedo.skills.read("demo", limit=i))["params"]["limit"]
out([asyncio.run(one(i)) for i in (1, 2, 3)] + [albedo.skills.read("demo", limit=4)["params"]["limit"]])`,
      kernelEnv(server),
    );
    expect(lastJson(result)).toEqual([1, 2, 3, 4]);
  });

  it("holds back calls beyond RPC_MAX_PENDING_CALLS and sends each as an earlier one ends, so none is refused", async () => {
    let server!: RpcServer;
    let most = 0;
    server = await startServer(RouteTable.of({
      "commands.catalog": async () => ({ commands: [] }),
      "skills.read": async (params) => {
        most = Math.max(most, server.pendingCount);
        await new Promise((resolve) => setTimeout(resolve, 1));
        return { limit: params.limit };
      },
    }));
    const calls = 2 * RPC_MAX_PENDING_CALLS + 10;
    const result = await runPython(
      `${PRELUDE}
async def main():
    pages = await asyncio.gather(*[albedo.skills.read("x", limit=i + 1) for i in range(${calls})])
    return [page["limit"] for page in pages]
out(asyncio.run(main()))`,
      kernelEnv(server),
    );
    expect(lastJson(result)).toEqual(Array.from({ length: calls }, (_, i) => i + 1));
    expect(most).toBeLessThanOrEqual(RPC_MAX_PENDING_CALLS);
    expect(most).toBeGreaterThan(1);
  });

  it("an awaited call refused before parsing (no id in the reply) fails at once with the server's error", async () => {
    const server = await startServer(fakeRoutes([declaration("/demo")], []));
    const env = kernelEnv(server, { maxMessageBytes: 4 * 1024 * 1024, deadlineMs: 20_000 });
    const result = await runPython(
      `${PRELUDE}
import time
async def big():
    began = time.monotonic()
    try:
        await albedo.commands.invoke("/demo", "x" * (2 * 1024 * 1024))
    except albedo.AlbedoError as e:
        return {"type": type(e).__name__, "rpc_code": e.rpc_code, "before_deadline": time.monotonic() - began < 10}
out(asyncio.run(big()))`,
      env,
    );
    expect(lastJson(result)).toEqual({ type: "LimitExceeded", rpc_code: -32004, before_deadline: true });
  });
});

describe("K-4 the kernel's reply decoder", () => {
  it("takes a UTF-8 JSON object, with escapes and surrounding whitespace; anything else is no reply", async () => {
    const result = await runPython(
      `${PRELUDE}
from albedo._endpoint import decode
frames = [b'{"id": 1, "result": {"content": "caf\\u00e9 \\ud83d\\ude00"}}', ' {"id": 2, "result": "é"} '.encode(), b'[1]', b'"text"',
          b'{"id": 3} trailing', b'\\xff{"id": 4}', b'']
out([decode(frame) for frame in frames])`,
      {},
    );
    expect(lastJson(result)).toEqual([
      { id: 1, result: { content: "café 😀" } },
      { id: 2, result: "é" },
      null, null, null, null, null,
    ]);
  });
});

const MINT_CATALOG = [
  declaration("/demo", {
    description: "Shows a demo.",
    arguments: [
      { name: "text", help: "what to show", required: true },
      { name: "times", help: "how often", required: false },
    ],
  }),
  declaration("/pdf-processing", { skill: "pdf-processing" }),
  declaration("/skill:model", { skill: "model" }),
  declaration("/help"),
  declaration("/catalog"),
  declaration("/class"),
  declaration("/user-only", { callers: ["user"] }),
  declaration("/a-b"),
  declaration("/a_b"),
];

describe("C-4 typed command methods", () => {
  it("mints one method per model command with a real signature and docstring, skipping bad names", async () => {
    const calls: FakeCall[] = [];
    const server = await startServer(fakeRoutes(MINT_CATALOG, calls));
    const result = await runPython(
      `${PRELUDE}
from albedo import commands
names = sorted(n for n in vars(commands) if not n.startswith("_"))
def _missing():
    try:
        commands.demo()
    except TypeError as e:
        return str(e)
out({
  "names": names,
  "signature": str(inspect.signature(commands.demo)),
  "doc": commands.demo.__doc__,
  "call": commands.demo("hello")["arguments"],
  "keywords": commands.demo(text="a b", times="2")["arguments"],
  "pdf": commands.pdf_processing()["invoked"],
  "skill_model": commands.invoke("/skill:model")["invoked"],
  "missing_arg": _missing(),
})`,
      kernelEnv(server),
    );
    const out = lastJson(result);
    expect(out.names).toEqual(["demo", "pdf_processing"]);
    expect(out.signature).toBe("(text, times=None)");
    expect(out.doc).toContain("Shows a demo.");
    expect(out.doc).toContain("text (required): what to show");
    expect(out.doc).toContain("times (optional): how often");
    expect(out.call).toEqual({ text: "hello" });
    expect(out.keywords).toEqual({ text: "a b", times: "2" });
    expect(out.pdf).toBe("/pdf-processing");
    expect(out.skill_model).toBe("/skill:model");
    expect(out.missing_arg).toContain("text");
  });

  it("keeps typed methods across a reload; a vanished command fails with not_found, a new one is reached by invoke", async () => {
    const calls: FakeCall[] = [];
    let server!: RpcServer;
    const after = [declaration("/fresh")];
    const tableA = fakeRoutes([declaration("/demo"), declaration("/reload")], calls, {
      swap: (table) => server.swapRoutes(table),
      next: () => fakeRoutes(after, calls, { revision: "B" }),
    });
    server = await startServer(tableA);
    const result = await runPython(
      `${PRELUDE}
from albedo import commands
before = commands.demo()["revision"]
commands.invoke("/reload", "session")
out({
  "before": before,
  "vanished": caught(commands.demo),
  "still_bound": hasattr(commands, "demo"),
  "fresh_typed": hasattr(commands, "fresh"),
  "fresh": commands.invoke("/fresh")["revision"],
})`,
      kernelEnv(server),
    );
    expect(lastJson(result)).toEqual({
      before: "A",
      vanished: expect.objectContaining({ type: "NotFound", code: "not_found", message: expect.stringContaining("/demo") }),
      still_bound: true,
      fresh_typed: false,
      fresh: "B",
    });
    // Once at load to mint the methods; once more when `hasattr(commands, "fresh")` missed, to say how to reach /fresh.
    expect(calls.filter((c) => c.method === "commands.catalog")).toHaveLength(2);
  });
});
