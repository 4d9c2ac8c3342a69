import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommsOverSubshells, KernelConnection } from "@jupyterlab/services";
import { AppError } from "../../src/errors/index.js";
import { serverSettings } from "../../src/kernel/index.js";
import { RouteTable, RPC_MAX_MESSAGE_BYTES, type CallContext } from "../../src/rpc/index.js";
import { declaration, type FakeCall } from "../rpc/fake-session.js";
import { remoteHarness, type RemoteHarness } from "./harness.js";
import { HAVE_JUPYTER_SERVER, startJupyterServer, type JupyterServer } from "./jupyterServer.js";
import { poll } from "../support/poll.js";

/** An interrupted cell must end well within this, against its 100 s wait. */
const CANCELLED_CELL_DEADLINE_MS = 15_000;
const BURST_CALLS = 5_000;
const GATHERED_CALLS = 200;
const FUTURE_CHECK_CALLS = 1_000;

function routes(calls: FakeCall[]): RouteTable {
  const record = (method: string) => async (params: Readonly<Record<string, unknown>>, context: CallContext) => {
    calls.push({ method, params, context });
    return { method };
  };
  const commands = [declaration("/demo", { arguments: [{ name: "text", help: "t", required: true }] }), declaration("/hang")];
  return RouteTable.of({
    "skills.list": record("skills.list"),
    "skills.resources": record("skills.resources"),
    // A reply of `limit` characters: the 1 MiB reply test sizes it just under the message limit, or over it.
    "skills.read": async (params, context) => {
      calls.push({ method: "skills.read", params, context });
      return { content: "x".repeat(Number(params.limit)) };
    },
    "commands.catalog": async () => ({ commands }),
    "commands.invoke": async (params, context) => {
      calls.push({ method: "commands.invoke", params, context });
      if (params.name === "/hang") return new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason)));
      if (params.name !== "/demo") throw new AppError("not_found", `no command ${String(params.name)}`);
      return { invoked: params.name, arguments: params.arguments };
    },
  });
}

describe.skipIf(!HAVE_JUPYTER_SERVER)("K-12 RPC over the albedo.rpc comm (real Jupyter Server)", () => {
  const calls: FakeCall[] = [];
  let server: JupyterServer;
  let remote: RemoteHarness;

  beforeAll(async () => {
    server = await startJupyterServer();
    remote = await remoteHarness(server, routes(calls));
  }, 120_000);

  afterAll(async () => {
    await remote?.close();
    await server?.stop();
  });

  it("an awaited call while the cell awaits answers, and the request is tied to the calling cell", async () => {
    const cell = await remote.run("r = await commands.demo('hi')\nprint(r['arguments']['text'])");
    expect(cell).toMatchObject({ status: "ok", stdout: "hi\n" });
    expect(calls.findLast((call) => call.method === "commands.invoke")?.context.cell).toBe(cell.msgId);
  });

  it("an error from albedo's served modules keeps only the user's frames, also after the cell changed directory", async () => {
    const cell = await remote.run([
      "import os, traceback, albedo._display as shown",
      "here = os.getcwd(); os.chdir('/')",
      "try:",
      "    await commands.invoke('/missing')",
      "except Exception as e:",
      "    whole, kept = traceback.format_tb(e.__traceback__), traceback.format_tb(shown.user_traceback(e.__traceback__))",
      "os.chdir(here)",
      "print(any('<albedo runtime>' in f for f in whole), any('<albedo runtime>' in f for f in kept), len(kept))",
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: "True False 1\n" });
  });

  it("a blocking call from the main thread, and one from a worker thread while the cell awaits, both answer", async () => {
    const cell = await remote.run([
      "import asyncio, threading, albedo",
      "main = albedo._session.channel.call_sync('skills.list', {})",
      "out = {}",
      "worker = threading.Thread(target=lambda: out.update(r=skills.resources('demo')))",
      "worker.start()",
      "while worker.is_alive():",
      "    await asyncio.sleep(0.01)",
      "print(main['method'], out['r']['method'])",
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: "skills.list skills.resources\n" });
  });

  it(`${GATHERED_CALLS} gathered calls each get their own answer`, async () => {
    const cell = await remote.run([
      "import asyncio",
      `rs = await asyncio.gather(*[commands.invoke('/demo', {'text': str(i)}) for i in range(${GATHERED_CALLS})])`,
      `print(all(r['arguments']['text'] == str(i) for i, r in enumerate(rs)), len(rs))`,
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: `True ${GATHERED_CALLS}\n` });
  });

  it("an interrupt cancels an awaiting cell over the comm, and the handler is aborted", async () => {
    const { future, cell } = await remote.start("print('calling', flush=True)\nawait commands.invoke('/hang')", "calling");
    await poll(() => calls.some((call) => call.params.name === "/hang" && call.context.cell === future.msgId));
    const handler = calls.find((call) => call.params.name === "/hang" && call.context.cell === future.msgId)!;
    const started = Date.now();
    await remote.kernel.interrupt();
    const ended = await cell;
    expect(Date.now() - started).toBeLessThan(CANCELLED_CELL_DEADLINE_MS);
    expect(ended.status).toBe("error");
    expect(ended.ename).toBe("KeyboardInterrupt");
    expect(handler.context.signal.aborted).toBe(true);
    expect(await remote.run("print(len(await skills.list()))")).toMatchObject({ status: "ok" });
  });

  it("albedo/cancel alone ends a cell awaiting asyncio.sleep(100)", async () => {
    const { future, cell } = await remote.start("import asyncio\nprint('waiting', flush=True)\nawait asyncio.sleep(100)", "waiting");
    remote.rpc.cancelCell(future.msgId);
    expect(await cell).toMatchObject({ status: "error", ename: "CancelledError" });
  });

  it("a reply of just under 1 MiB arrives whole; a bigger one and an oversized request are refused with limit_exceeded", async () => {
    const fits = RPC_MAX_MESSAGE_BYTES - 1_000;
    const before = calls.length;
    const cell = await remote.run([
      "import albedo",
      `r = await skills.read('big', limit=${fits})`,
      "print(len(r['content']))",
      "for attempt in (lambda: skills.read('big', limit=2**20), lambda: commands.invoke('/demo', {'text': 'x' * 2**20})):",
      "    try:",
      "        await attempt()",
      "    except albedo.LimitExceeded as error:",
      "        print('refused', error.data.get('limit'))",
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: `${fits}\nrefused RPC_MAX_MESSAGE_BYTES\nrefused RPC_MAX_MESSAGE_BYTES\n` });
    // The oversized request never left the kernel: only the two reads reached the runtime.
    expect(calls.slice(before).map((call) => call.method)).toEqual(["skills.read", "skills.read"]);
  });

  it(`a burst of ${BURST_CALLS} calls loses none under the server's iopub rate limit`, async () => {
    const before = calls.filter((call) => call.method === "commands.invoke").length;
    const cell = await remote.run([
      "import asyncio",
      `rs = await asyncio.gather(*[commands.invoke('/demo', {'text': str(i)}) for i in range(${BURST_CALLS})])`,
      "print(sum(r['arguments']['text'] == str(i) for i, r in enumerate(rs)))",
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: `${BURST_CALLS}\n` });
    expect(calls.filter((call) => call.method === "commands.invoke").length - before).toBe(BURST_CALLS);
    expect(await server.log()).not.toContain("IOPub message rate exceeded");
  }, 120_000);

  it("the server's execution_state stays busy during a cell that calls, awaited and blocking", async () => {
    const { cell } = await remote.start([
      "import asyncio, albedo",
      "print('calling', flush=True)",
      "for i in range(30):",
      "    await skills.list()",
      "    albedo._session.channel.call_sync('skills.list', {})",
      "    await asyncio.sleep(0.03)",
    ].join("\n"), "calling");
    const states: string[] = [];
    let done = false;
    void cell.finally(() => (done = true));
    while (!done) {
      const model = (await server.get(`api/kernels/${remote.kernel.id}`)) as { execution_state: string };
      if (!done) states.push(model.execution_state);
      await new Promise((wait) => setTimeout(wait, 25));
    }
    expect((await cell).status).toBe("ok");
    // Polls that raced the cell's own end may read its final idle; every one before must read busy.
    while (states.at(-1) === "idle") states.pop();
    expect(states.length).toBeGreaterThan(5);
    expect(new Set(states)).toEqual(new Set(["busy"]));
  });

  it("a comm opened by another client without the secret is closed by the kernel; one opened from the kernel side is ignored", async () => {
    // No per-target subshell for the foreign client: services' own request for one would be cancelled
    // by the dispose below and reject where nothing listens. The kernel's refusal is the same either way.
    const other = new KernelConnection({
      model: { id: remote.kernel.id!, name: "python3" }, serverSettings: serverSettings({ url: server.url, token: server.token }),
      commsOverSubshells: CommsOverSubshells.Disabled,
    });
    try {
      await other.info;
      const foreign = other.createComm("albedo.rpc");
      let closed = false;
      foreign.onClose = () => void (closed = true);
      foreign.open({ secret: "not the session's secret" }).dispose();
      await poll(() => closed);
    } finally {
      other.dispose();
    }
    const before = calls.length;
    const cell = await remote.run([
      "from comm import create_comm",
      "c = create_comm(target_name='albedo.rpc', data={})",
      "c.send({'jsonrpc': '2.0', 'id': 999999, 'method': 'skills.list', 'params': {}})",
      "import asyncio",
      "await asyncio.sleep(0.5)",
      "print((await commands.demo('after'))['arguments']['text'])",
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: "after\n" });
    expect(calls.slice(before).map((call) => call.method)).toEqual(["commands.invoke"]);
  });

  it(`no comm futures are left after ${FUTURE_CHECK_CALLS} calls`, async () => {
    const cell = await remote.run([
      "import asyncio, albedo",
      `await asyncio.gather(*[skills.list() for _ in range(${FUTURE_CHECK_CALLS / 2})])`,
      `for _ in range(${FUTURE_CHECK_CALLS / 2}):`,
      "    albedo._session.channel.call_sync('skills.list', {})",
      "print('ok')",
    ].join("\n"));
    expect(cell).toMatchObject({ status: "ok", stdout: "ok\n" });
    expect(remote.kernel.pendingServicesFutures()).toBe(0);
  }, 60_000);
});
