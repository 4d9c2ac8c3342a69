import { KernelConnection, type KernelMessage } from "@jupyterlab/services";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RemoteKernelConnection } from "../../src/kernel/remote/connection.js";

type InfoReply = KernelMessage.IInfoReplyMsg | undefined;

/** What services' future rejects with when a restart disposes of it before its reply and idle. */
const canceled = () => new Error("Canceled future for kernel_info_request message before replies were done");
/** Long enough for a settled promise to have run its handlers. */
const SETTLE_MS = 20;

/** services' requestKernelInfo answers with `answer`; the subclass's methods are called on a bare object. */
function servicesAnswers(answer: () => Promise<InfoReply>) {
  vi.spyOn(KernelConnection.prototype, "requestKernelInfo").mockImplementation(answer);
  const self = {} as RemoteKernelConnection;
  return {
    quiet: () => RemoteKernelConnection.prototype.requestKernelInfo.call(self),
    orCancel: () => RemoteKernelConnection.prototype.requestKernelInfoOrCancel.call(self),
  };
}

async function settled(promise: Promise<unknown>): Promise<string> {
  const outcome = promise.then(() => "resolved", (error: unknown) => `rejected: ${String(error)}`);
  return Promise.race([outcome, new Promise<string>((done) => setTimeout(() => done("pending"), SETTLE_MS))]);
}

describe("K-12 services' kernel_info request on a remote connection (RemoteKernelConnection)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("a request services cancels stays pending instead of rejecting: services chains it with no rejection handler", async () => {
    const { quiet } = servicesAnswers(() => Promise.reject(canceled()));
    expect(await settled(quiet())).toBe("pending");
  });

  it("any other failure still rejects, and a reply still resolves", async () => {
    const { quiet } = servicesAnswers(() => Promise.reject(new Error("Kernel connection is disposed")));
    expect(await settled(quiet())).toBe("rejected: Error: Kernel connection is disposed");
    const reply = { header: { msg_id: "r" } } as unknown as KernelMessage.IInfoReplyMsg;
    vi.mocked(KernelConnection.prototype.requestKernelInfo).mockImplementation(() => Promise.resolve(reply));
    await expect(quiet()).resolves.toBe(reply);
  });

  it("requestKernelInfoOrCancel keeps services' cancellation, for a caller waiting on the answer (kernelInfo)", async () => {
    const { orCancel } = servicesAnswers(() => Promise.reject(canceled()));
    await expect(orCancel()).rejects.toThrow(/^Canceled future for kernel_info_request/);
  });
});
