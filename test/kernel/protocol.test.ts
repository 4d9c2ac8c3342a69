import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MISSING_REPLY_ENAME, type ExecuteOutput, type KernelClient } from "../../src/kernel/index.js";
import { endedByInterrupt, ipykernelSpec, runCleanups, startTestKernel, streamText, type TestKernel } from "./fixtures.js";
import { poll } from "../support/poll.js";

const shared: Array<() => Promise<void>> = [];
const perTest: Array<() => Promise<void>> = [];
let kernel: TestKernel;
let client: KernelClient;

beforeAll(async () => {
  kernel = await startTestKernel(shared);
  client = kernel.client;
});
afterAll(() => runCleanups(shared));
afterEach(() => runCleanups(perTest));

async function run(code: string): Promise<{ outputs: ExecuteOutput[]; reply: Awaited<ReturnType<KernelClient["execute"]>["done"]> }> {
  const future = client.execute(code);
  const outputs: ExecuteOutput[] = [];
  for await (const output of future) outputs.push(output);
  return { outputs, reply: await future.done };
}

describe("K-2 readiness", () => {
  it("is ready only after kernel_info_reply and iopub_welcome, with features from supported_features", async () => {
    expect(["ready", "idle", "busy"]).toContain(client.status);
    expect(client.info?.status).toBe("ok");
    expect(client.info?.protocol_version).toMatch(/^5\./);
    expect(client.info?.language_info.name).toBe("python");
    expect(Array.isArray(client.info?.supported_features ?? [])).toBe(true);
    const info = await client.kernelInfo();
    expect(info.implementation).toBe("ipython");
  });

  it("delivers the first execution's idle on a fresh kernel (no lost first message)", async () => {
    const fresh = await startTestKernel(perTest);
    const reply = await fresh.client.execute("1+1").done;
    expect(reply.status).toBe("ok");
  });
});

describe("K-2 an execution's timeline", () => {
  it("has when it was sent, the kernel's own dates of busy, reply and idle in order, and when each answer came", async () => {
    const future = client.execute("1");
    await future.done;
    const t = future.timeline.times();
    for (const step of ["sent", "kernelBusy", "kernelReply", "kernelIdle", "replyReceived", "idleReceived", "settled"] as const) {
      expect(t[step], step).toEqual(expect.any(Number));
    }
    // Each side's steps are ordered on its own clock; across the two, clocks may differ by a little.
    expect(t.kernelBusy!).toBeLessThanOrEqual(t.kernelReply!);
    expect(t.kernelReply!).toBeLessThanOrEqual(t.kernelIdle!);
    expect(t.sent!).toBeLessThanOrEqual(Math.min(t.replyReceived!, t.idleReceived!));
    expect(t.settled!).toBeGreaterThanOrEqual(Math.max(t.replyReceived!, t.idleReceived!));
  });
});

describe("K-2 execute outputs", () => {
  it("streams stdout and stderr tied to the request", async () => {
    const { outputs, reply } = await run("import sys\nprint('out line')\nprint('err line', file=sys.stderr)");
    expect(reply.status).toBe("ok");
    const streams = outputs.filter((output) => output.header.msg_type === "stream");
    expect(streams.map((output) => (output.content as { name: string }).name).sort()).toEqual(["stderr", "stdout"]);
    expect(streamText(outputs)).toContain("out line");
    expect(streamText(outputs)).toContain("err line");
  });

  it("delivers execute_result, display_data and update_display_data", async () => {
    const { outputs } = await run("from IPython.display import display\nh = display('first', display_id=True)\nh.update('second')\n6*7");
    const types = outputs.map((output) => output.header.msg_type);
    expect(types).toEqual(["display_data", "update_display_data", "execute_result"]);
    const result = outputs[2]!.content as { data: Record<string, string> };
    expect(result.data["text/plain"]).toBe("42");
  });

  it("delivers a Python error as an error output and an error reply", async () => {
    const { outputs, reply } = await run("1/0");
    expect(reply.status).toBe("error");
    const error = outputs.find((output) => output.header.msg_type === "error");
    expect((error?.content as { ename: string }).ename).toBe("ZeroDivisionError");
  });

  it("runs queued executions in order, each with only its own outputs", async () => {
    const futures = [0, 1, 2, 3, 4].map((i) => client.execute(`import time; time.sleep(0.05); print('cell ${i}')`));
    const finished: number[] = [];
    const outputs = futures.map(() => [] as ExecuteOutput[]);
    futures.forEach((future, i) => {
      future.onOutput((output) => outputs[i]!.push(output));
      void future.done.then(() => finished.push(i));
    });
    const replies = await Promise.all(futures.map((future) => future.done));
    expect(finished).toEqual([0, 1, 2, 3, 4]);
    const counts = replies.map((reply) => reply.execution_count);
    expect(counts).toEqual([...counts].sort((a, b) => (a ?? 0) - (b ?? 0)));
    outputs.forEach((list, i) => expect(streamText(list)).toBe(`cell ${i}\n`));
  });

  it("reports the running execution through currentExecution()", async () => {
    const future = client.execute("import time; time.sleep(0.3)");
    await poll(() => client.currentExecution()?.msgId === future.msgId, { timeoutMs: 5_000 });
    await future.done;
    expect(client.currentExecution()).toBeUndefined();
  });

  it("passes iopub messages of no in-flight request to onIOPub", async () => {
    const seen: string[] = [];
    const listener = client.onIOPub((message) => {
      if (message.header.msg_type === "stream") seen.push((message.content as { text: string }).text);
    });
    await client.execute("import threading\nthreading.Timer(0.3, lambda: print('late output', flush=True)).start()").done;
    await poll(() => seen.join("").includes("late output"), { timeoutMs: 10_000 });
    listener.dispose();
  });

  it("completes code", async () => {
    // Jedi's first inference can take many seconds on a loaded machine; the plain completer is enough here.
    await client.execute("%config IPCompleter.use_jedi = False\nalbedo_value = 1").done;
    const reply = await client.complete("albedo_va", 9);
    expect(reply.status).toBe("ok");
    expect((reply as { matches: string[] }).matches).toContain("albedo_value");
  });
});

describe("K-2 stdin", () => {
  it("answers input_request with the onInput handler", async () => {
    const prompts: Array<[string, boolean]> = [];
    const future = client.execute("name = input('who? ')\nprint('hello', name)", {
      onInput: async (prompt, password) => {
        prompts.push([prompt, password]);
        return "albedo";
      },
    });
    const outputs: ExecuteOutput[] = [];
    for await (const output of future) outputs.push(output);
    expect((await future.done).status).toBe("ok");
    expect(prompts).toEqual([["who? ", false]]);
    expect(streamText(outputs)).toContain("hello albedo");
  });

  it("refuses input when no handler is given (allow_stdin false)", async () => {
    const { reply, outputs } = await run("input('x')");
    expect(reply.status).toBe("error");
    expect((outputs.find((output) => output.header.msg_type === "error")?.content as { ename: string }).ename).toBe("StdinNotImplementedError");
  });
});

describe("K-2 signatures", () => {
  it("drops and logs a message with a bad signature; a correctly signed one is delivered", async () => {
    const code = [
      "from jupyter_client.session import Session",
      "k = get_ipython().kernel",
      "parent = k.get_parent()",
      "Session(key=b'forged-key').send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'FORGED\\n'}, parent=parent)",
      "k.session.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'GENUINE\\n'}, parent=parent)",
    ].join("\n");
    const before = kernel.logs.length;
    const { outputs, reply } = await run(code);
    expect(reply.status).toBe("ok");
    expect(streamText(outputs)).toContain("GENUINE");
    expect(streamText(outputs)).not.toContain("FORGED");
    const dropped = kernel.logs.slice(before).filter((record) => record.message === "dropped a kernel message");
    expect(dropped.map((record) => record.data)).toEqual([{ channel: "iopub", reason: "bad signature" }]);
  });
});

/** The order in which `future` says it began and it ended (`begun` also settles with the end, after it). */
function steps(future: { begun: Promise<void>; done: Promise<unknown> }): string[] {
  const seen: string[] = [];
  void future.begun.then(() => seen.push("begun"));
  void future.done.then(() => seen.push("done"), () => seen.push("done"));
  return seen;
}

describe("K-2 interrupt", () => {
  for (const mode of ["signal", "message"] as const) {
    it(`interrupts time.sleep(100) in ${mode} mode and keeps working`, async () => {
      const { client: kernelClient } = await startTestKernel(perTest, { spec: ipykernelSpec(mode) });
      const interrupted: Array<string | undefined> = [];
      kernelClient.onInterrupt((event) => interrupted.push(event.msgId));
      const future = kernelClient.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(100)");
      const outputs: ExecuteOutput[] = [];
      future.onOutput((output) => outputs.push(output));
      await poll(() => streamText(outputs).includes("sleeping"), { timeoutMs: 20_000 });
      await kernelClient.interrupt();
      const reply = await endedByInterrupt(kernelClient, future.done, `K-2 ${mode} interrupt`);
      expect(reply.status).toBe("error");
      expect((reply as { ename: string }).ename).toBe("KeyboardInterrupt");
      expect(interrupted).toEqual([future.msgId]);
      expect((await kernelClient.execute("1+1").done).status).toBe("ok");
    });

    it(`an interrupt sent with the cell, before the kernel began it, still stops it (${mode} mode)`, async () => {
      const { client: kernelClient } = await startTestKernel(perTest, { spec: ipykernelSpec(mode) });
      // The kernel ignores SIGINT between requests: sent at once, the interrupt would land before the cell runs.
      const future = kernelClient.execute("import time\ntime.sleep(100)");
      const seen = steps(future);
      const interrupting = kernelClient.interrupt();
      // Counted from when the signal went out: the interrupt itself waits for the cell to begin.
      await Promise.race([interrupting, future.done]);
      const reply = await endedByInterrupt(kernelClient, future.done, `K-2 ${mode} interrupt sent with the cell`);
      await interrupting;
      // The cell stopped rather than sleeping on. On a loaded machine the signal can still land in
      // ipykernel's own code between execute_input and the cell's first line, which ends the request
      // without a reply (see MISSING_REPLY_ENAME); otherwise it is the cell's KeyboardInterrupt.
      expect(reply.status).toBe("error");
      expect(["KeyboardInterrupt", MISSING_REPLY_ENAME]).toContain((reply as { ename?: string }).ename);
      // The interrupt waited for the kernel's word that it began the cell, not for the cell's end.
      expect(seen).toEqual(["begun", "done"]);
      // A silent request has no execute_input, so its busy is taken as begun. ipykernel publishes busy
      // a little before it starts taking signals, so only the order is checked, on a short cell.
      const silent = kernelClient.execute("import time\ntime.sleep(2)", { silent: true });
      const silentSeen = steps(silent);
      await Promise.all([kernelClient.interrupt(), silent.done]);
      expect(silentSeen).toEqual(["begun", "done"]);
      // An interrupt with no cell at all is sent at once and changes nothing.
      await kernelClient.interrupt();
      expect((await kernelClient.execute("1+1").done).status).toBe("ok");
    });
  }
});
