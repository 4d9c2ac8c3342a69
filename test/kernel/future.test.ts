import { KernelMessage } from "@jupyterlab/services";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ExecuteFuture, MISSING_REPLY_ENAME, REPLY_AFTER_IDLE_GRACE_MS } from "../../src/kernel/index.js";
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
