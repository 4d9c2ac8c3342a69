import type { Kernel, KernelMessage } from "@jupyterlab/services";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REMOTE_INFO_NUDGE_MS } from "../../src/kernel/remote/limits.js";
import { connectedInfo, type InfoSource } from "../../src/kernel/remote/ready.js";

type Answer = () => Promise<KernelMessage.IInfoReplyMsg | undefined>;
type Slot = (sender: unknown, status: Kernel.ConnectionStatus) => void;

/** A services connection as connectedInfo sees it: `answers[i]` answers the i-th kernel_info_request. */
function fakeConnection(answers: readonly Answer[], status: Kernel.ConnectionStatus = "connected") {
  const slots = new Set<Slot>();
  const fake = {
    isDisposed: false,
    connectionStatus: status,
    requests: 0,
    connectionStatusChanged: {
      connect: (slot: Slot) => (slots.add(slot), true),
      disconnect: (slot: Slot) => slots.delete(slot),
    },
    requestKernelInfo: () => (answers[fake.requests++] ?? answers.at(-1)!)(),
    becomes(next: Kernel.ConnectionStatus) {
      fake.connectionStatus = next;
      for (const slot of [...slots]) slot(fake, next);
    },
  };
  return fake;
}

const reply = (n: number) => ({ header: { msg_id: `reply-${n}` } }) as unknown as KernelMessage.IInfoReplyMsg;
/** What services' future does when the kernel_info_reply came but its iopub idle never does. */
const lost: Answer = () => new Promise(() => undefined);

describe("K-12 the boot's kernel_info (connectedInfo)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("asks again every REMOTE_INFO_NUDGE_MS while no request got both its reply and its idle, and takes the first complete answer", async () => {
    const connection = fakeConnection([lost, lost, async () => reply(3)]);
    let answered: KernelMessage.IInfoReplyMsg | undefined;
    void connectedInfo(connection satisfies InfoSource).then((info) => (answered = info));
    await vi.advanceTimersByTimeAsync(REMOTE_INFO_NUDGE_MS - 1);
    expect([connection.requests, answered]).toEqual([1, undefined]);
    await vi.advanceTimersByTimeAsync(2 * REMOTE_INFO_NUDGE_MS);
    expect([connection.requests, answered]).toEqual([3, reply(3)]);
  });

  it("an earlier request that completes late still counts", async () => {
    let late!: (info: KernelMessage.IInfoReplyMsg) => void;
    const connection = fakeConnection([() => new Promise((resolve) => (late = resolve)), lost]);
    const info = connectedInfo(connection);
    await vi.advanceTimersByTimeAsync(REMOTE_INFO_NUDGE_MS);
    late(reply(1));
    expect(await info).toEqual(reply(1));
    expect(connection.requests).toBe(2);
  });

  it("sends nothing while the WebSocket reconnects, asks once it is connected, and fails with kernel_died when services gives up", async () => {
    const connection = fakeConnection([async () => reply(1)], "connecting");
    const info = connectedInfo(connection);
    await vi.advanceTimersByTimeAsync(3 * REMOTE_INFO_NUDGE_MS);
    expect(connection.requests).toBe(0);
    connection.becomes("connected");
    expect(await info).toEqual(reply(1));

    const dropped = fakeConnection([lost], "connecting");
    const failure = connectedInfo(dropped).catch((error: unknown) => error);
    dropped.becomes("disconnected");
    expect(await failure).toMatchObject({ code: "kernel_died" });
  });
});
