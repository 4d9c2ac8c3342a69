import { KernelMessage } from "@jupyterlab/services";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { jsonBytes } from "../../src/json/index.js";
import { ExecuteFuture, MAX_OUTPUT_MESSAGE_BYTES, MAX_PENDING_OUTPUT_BYTES, MISSING_REPLY_ENAME, REPLY_AFTER_IDLE_GRACE_MS } from "../../src/kernel/index.js";
import { LOST_IDLE_GRACE_MS } from "../../src/kernel/limits.js";
import { executeRequest } from "../../src/kernel/messages.js";

const SESSION = "s";

function future(): ExecuteFuture {
  return new ExecuteFuture(executeRequest(SESSION, { code: "1", silent: false, store_history: true, allow_stdin: false, stop_on_error: false }));
}

function idle(parent: KernelMessage.IMessage): KernelMessage.IIOPubMessage {
  return KernelMessage.createMessage({ channel: "iopub", msgType: "status", session: SESSION, content: { execution_state: "idle" }, parentHeader: parent.header as never }) as KernelMessage.IIOPubMessage;
}

function reply(parent: KernelMessage.IMessage): KernelMessage.IExecuteReplyMsg {
  return KernelMessage.createMessage({
    channel: "shell", msgType: "execute_reply", session: SESSION, parentHeader: parent.header as never,
    content: { status: "ok", execution_count: 1, user_expressions: {} },
  }) as KernelMessage.IExecuteReplyMsg;
}

describe("K-2 an execution the kernel never answers", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("settles with a NoExecuteReply error once idle came and no reply followed within REPLY_AFTER_IDLE_GRACE_MS", async () => {
    const execution = future();
    const settled = vi.fn();
    void execution.done.then(settled);
    execution.handleIOPub(idle(execution.request));
    await vi.advanceTimersByTimeAsync(REPLY_AFTER_IDLE_GRACE_MS - 1);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toHaveBeenCalledWith(expect.objectContaining({ status: "error", ename: MISSING_REPLY_ENAME }));
  });

  it("takes a reply that comes after idle within the grace, and leaves no timer behind", async () => {
    const execution = future();
    execution.handleIOPub(idle(execution.request));
    await vi.advanceTimersByTimeAsync(REPLY_AFTER_IDLE_GRACE_MS / 2);
    execution.handleReply(reply(execution.request));
    await expect(execution.done).resolves.toMatchObject({ status: "ok" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("starts no timer when the reply came first", async () => {
    const execution = future();
    execution.handleReply(reply(execution.request));
    execution.handleIOPub(idle(execution.request));
    await expect(execution.done).resolves.toMatchObject({ status: "ok" });
    expect(vi.getTimerCount()).toBe(0);
  });
});

function streamOutput(parent: KernelMessage.IMessage, text: string): KernelMessage.IIOPubMessage {
  return KernelMessage.createMessage({ channel: "iopub", msgType: "stream", session: SESSION, content: { name: "stdout", text }, parentHeader: parent.header as never }) as KernelMessage.IIOPubMessage;
}

describe("K-2 B an execution's outputs are bounded as they arrive", () => {
  it("cuts an output larger than MAX_OUTPUT_MESSAGE_BYTES before any listener sees it, and counts the bytes cut", () => {
    const execution = future();
    const seen: KernelMessage.IStreamMsg[] = [];
    execution.onOutput((output) => seen.push(output as KernelMessage.IStreamMsg));
    execution.handleIOPub(streamOutput(execution.request, "x".repeat(3 * MAX_OUTPUT_MESSAGE_BYTES)));
    expect(jsonBytes(seen[0]!.content)).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    expect(seen[0]!.content.text).toMatch(/\[albedo: 4\.0 MB of output dropped: more than MAX_OUTPUT_MESSAGE_BYTES \(2\.0 MB\) in one output\]\n$/);
    expect(seen[0]!.header.msg_type).toBe("stream");
    expect(execution.cutOutputBytes).toBeGreaterThan(2 * MAX_OUTPUT_MESSAGE_BYTES);
  });

  it("cuts the traceback an error reply repeats", async () => {
    const execution = future();
    const huge = reply(execution.request);
    (huge as { content: unknown }).content = { status: "error", execution_count: 1, ename: "ValueError", evalue: "z".repeat(3 * MAX_OUTPUT_MESSAGE_BYTES), traceback: ["z".repeat(3 * MAX_OUTPUT_MESSAGE_BYTES)] };
    execution.handleReply(huge);
    execution.handleIOPub(idle(execution.request));
    const settled = await execution.done;
    expect(jsonBytes(settled)).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    expect(settled).toMatchObject({ status: "error", ename: "ValueError" });
  });

  it("keeps nothing for an iterator nobody created, and at most MAX_PENDING_OUTPUT_BYTES for one that is not drained", async () => {
    const execution = future();
    const chunk = "y".repeat(MAX_OUTPUT_MESSAGE_BYTES / 2);
    execution.handleIOPub(streamOutput(execution.request, "before the iterator\n"));
    const iterator = execution[Symbol.asyncIterator]();
    const count = (2 * MAX_PENDING_OUTPUT_BYTES) / chunk.length;
    for (let i = 0; i < count; i += 1) execution.handleIOPub(streamOutput(execution.request, chunk));
    execution.handleReply(reply(execution.request));
    execution.handleIOPub(idle(execution.request));
    let bytes = 0;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      expect((next.value.content as { text: string }).text).toBe(chunk);
      bytes += jsonBytes(next.value.content);
    }
    expect(bytes).toBeLessThanOrEqual(MAX_PENDING_OUTPUT_BYTES);
    expect(bytes).toBeGreaterThan(MAX_PENDING_OUTPUT_BYTES - MAX_OUTPUT_MESSAGE_BYTES);
    expect(execution.droppedOutputs).toBeGreaterThan(0);
  });
});

/** The turn after the event loop polled its sockets, where a lost idle is counted (real: only timeouts are faked there). */
const afterPoll = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("K-2 B an execution whose kernel connection was dropped for a message over MAX_KERNEL_MESSAGE_BYTES", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }));
  afterEach(() => vi.useRealTimers());

  it("says so in a note among its outputs, and settles LOST_IDLE_GRACE_MS after its reply when iopub (and the idle with it) was lost", async () => {
    const execution = future();
    const seen: KernelMessage.IStreamMsg[] = [];
    execution.onOutput((output) => seen.push(output as KernelMessage.IStreamMsg));
    const settled = vi.fn();
    void execution.done.then(settled);
    execution.connectionLost("iopub");
    expect(seen.map((output) => [output.header.msg_type, output.content.name, output.content.text])).toEqual([
      ["stream", "stderr", "[albedo: the kernel sent a message over MAX_KERNEL_MESSAGE_BYTES (64.0 MB) on iopub; it was dropped, with what the kernel sent on iopub until albedo connected again]\n"],
    ]);
    expect(seen[0]!.parent_header).toEqual(execution.request.header);
    execution.handleReply(reply(execution.request));
    await vi.advanceTimersByTimeAsync(LOST_IDLE_GRACE_MS - 1);
    await afterPoll();
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await afterPoll();
    expect(settled).toHaveBeenCalledWith(expect.objectContaining({ status: "ok" }));
    expect(vi.getTimerCount()).toBe(0);
  });

  it("takes an idle that does come, and with reply and idle both lost ends as a missing reply", async () => {
    const first = future();
    first.connectionLost("iopub");
    first.handleReply(reply(first.request));
    first.handleIOPub(idle(first.request));
    await expect(first.done).resolves.toMatchObject({ status: "ok" });
    expect(vi.getTimerCount()).toBe(0);
    const second = future();
    second.connectionLost("iopub");
    second.connectionLost("shell");
    await vi.advanceTimersByTimeAsync(LOST_IDLE_GRACE_MS);
    await expect(second.done).resolves.toMatchObject({ status: "error", ename: MISSING_REPLY_ENAME });
  });
});
