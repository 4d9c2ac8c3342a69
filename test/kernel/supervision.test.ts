import { readdir, readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { isAppError } from "../../src/errors/index.js";
import { RestartPolicy, superviseKernel, type ExecuteOutput, type StatusEvent } from "../../src/kernel/index.js";
import { runCleanups, startTestKernel, streamText } from "./fixtures.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(() => runCleanups(cleanups));

/** Starts a cell that prints a marker then sleeps, and waits until the marker arrived. */
async function sleepingCell(kernel: Awaited<ReturnType<typeof startTestKernel>>) {
  const future = kernel.client.execute("import time\nprint('asleep', flush=True)\ntime.sleep(100)");
  const outputs: ExecuteOutput[] = [];
  future.onOutput((output) => outputs.push(output));
  await poll(() => streamText(outputs).includes("asleep"), { timeoutMs: 20_000 });
  return future;
}

function deadEvents(statuses: readonly StatusEvent[]): StatusEvent[] {
  return statuses.filter((event) => event.status === "dead");
}

describe("K-9 death detection", () => {
  it("fails the pending execution with kernel_died when the kernel is SIGKILLed mid-execution", async () => {
    const kernel = await startTestKernel(cleanups);
    const pid = kernel.client.pid!;
    const future = await sleepingCell(kernel);
    const queued = kernel.client.execute("1+1");
    process.kill(pid, "SIGKILL");
    const error = await future.done.then(() => undefined, (reason: unknown) => reason);
    expect(isAppError(error, "kernel_died")).toBe(true);
    await expect(queued.done).rejects.toMatchObject({ code: "kernel_died" });
    expect(deadEvents(kernel.statuses)).toEqual([{ status: "dead", reason: "process killed by SIGKILL" }]);
    expect(kernel.client.status).toBe("dead");
    await expect(kernel.client.execute("1").done).rejects.toMatchObject({ code: "kernel_died" });
    await poll(async () => (await readdir(kernel.runDir)).length === 0, { timeoutMs: 5_000 });
  });

  it("detects heartbeat loss of a stopped (SIGSTOP) kernel and kills it", async () => {
    const kernel = await startTestKernel(cleanups);
    const pid = kernel.client.pid!;
    const future = kernel.client.execute("import time\ntime.sleep(100)");
    await poll(() => kernel.client.currentExecution() !== undefined, { timeoutMs: 5_000 });
    process.kill(pid, "SIGSTOP");
    try {
      await expect(future.done).rejects.toMatchObject({ code: "kernel_died" });
      expect(deadEvents(kernel.statuses)[0]?.reason).toMatch(/^heartbeat lost/);
      await poll(() => !alive(pid), { timeoutMs: 5_000 });
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });
});

describe("K-9 restart", () => {
  it("restart() gives a fresh kernel with a new key and pid, and execution keeps working", async () => {
    const kernel = await startTestKernel(cleanups);
    const firstPid = kernel.client.pid!;
    await kernel.client.execute("x = 41").done;
    const oldKey = JSON.parse(await readFile(kernel.client.connectionFile!, "utf8")).key as string;
    await kernel.client.restart();
    expect(kernel.statuses.map((event) => event.status)).toEqual(expect.arrayContaining(["restarting", "ready"]));
    expect(kernel.client.pid).not.toBe(firstPid);
    expect(alive(firstPid)).toBe(false);
    const newKey = JSON.parse(await readFile(kernel.client.connectionFile!, "utf8")).key as string;
    expect(newKey).not.toBe(oldKey);
    const reply = await kernel.client.execute("x").done;
    expect(reply.status).toBe("error");
    expect((await kernel.client.execute("x = 1\nx + 1").done).status).toBe("ok");
  });

  it("auto-restarts a dead kernel under the policy, and gives up past the cap", async () => {
    const kernel = await startTestKernel(cleanups);
    const gaveUp: string[] = [];
    const supervision = superviseKernel(kernel.client, new RestartPolicy(1, 60_000), { onGaveUp: (reason) => gaveUp.push(reason) });
    process.kill(kernel.client.pid!, "SIGKILL");
    await poll(() => kernel.statuses.some((event) => event.status === "ready"), { timeoutMs: 30_000 });
    const statuses = kernel.statuses.map((event) => event.status);
    expect(statuses.indexOf("dead")).toBeLessThan(statuses.indexOf("restarting"));
    expect(statuses.indexOf("restarting")).toBeLessThan(statuses.indexOf("ready"));
    expect((await kernel.client.execute("1+1").done).status).toBe("ok");
    process.kill(kernel.client.pid!, "SIGKILL");
    await poll(() => gaveUp.length === 1, { timeoutMs: 10_000 });
    expect(kernel.client.status).toBe("dead");
    supervision.dispose();
  });

  it("RestartPolicy allows at most maxRestarts within the window", () => {
    const policy = new RestartPolicy(3, 1_000);
    expect([0, 10, 20, 30].map((t) => policy.tryConsume(t))).toEqual([true, true, true, false]);
    expect(policy.tryConsume(1_000)).toBe(true);
    expect(policy.tryConsume(1_005)).toBe(false);
  });
});

describe("K-9 shutdown ladder", () => {
  it("leaves no process, socket file or connection file, and is idempotent", async () => {
    const kernel = await startTestKernel(cleanups);
    const pid = kernel.client.pid!;
    expect((await readdir(kernel.runDir)).length).toBe(6);
    await Promise.all([kernel.client.shutdown(), kernel.client.shutdown()]);
    await kernel.client.shutdown();
    expect(alive(pid)).toBe(false);
    expect(await readdir(kernel.runDir)).toEqual([]);
    expect(kernel.statuses.at(-1)).toEqual({ status: "stopped" });
    await expect(kernel.client.execute("1").done).rejects.toMatchObject({ code: "cancelled" });
    expect(kernel.logs.some((record) => record.message.includes("SIGTERM"))).toBe(false);
  });

  it("escalates to SIGTERM then SIGKILL when the kernel does not answer shutdown_request", async () => {
    const kernel = await startTestKernel(cleanups);
    const pid = kernel.client.pid!;
    const pending = kernel.client.execute("import time\ntime.sleep(100)");
    process.kill(pid, "SIGSTOP");
    await kernel.client.shutdown();
    await expect(pending.done).rejects.toMatchObject({ code: "cancelled" });
    const steps = kernel.logs.map((record) => record.message).filter((message) => /shutdown_request|SIGTERM|SIGKILL/.test(message));
    expect(steps).toEqual(["sending shutdown_request", "kernel still running; sending SIGTERM", "kernel ignored SIGTERM; sending SIGKILL"]);
    expect(alive(pid)).toBe(false);
    expect(await readdir(kernel.runDir)).toEqual([]);
  });
});
