import { KernelConnection, type KernelMessage } from "@jupyterlab/services";

type InfoReply = KernelMessage.IInfoReplyMsg | undefined;

/**
 * How services' future rejects when services disposes of it before its reply and idle came: at a
 * restart, ours or one the server made (`_clearKernelState`; at dispose services resolves
 * undefined instead). The request's future is never handed out, so nothing but services can
 * dispose of it. Matched by text, as services itself matches it; the remote lifecycle test fails
 * if the text changes.
 */
const CANCELED_KERNEL_INFO = "Canceled future for kernel_info_request message";

/**
 * A services KernelConnection whose own kernel_info request, sent at every (re)connect, cannot end
 * the process. services chains `.then` to that request with no rejection handler, so when its idle
 * was lost (a kernel the server restarted after it died busy) and a later restart cancels it, the
 * rejection is unhandled and Node 20 exits. No process-level handler: it would hide other bugs.
 */
export class RemoteKernelConnection extends KernelConnection {
  /**
   * As services' requestKernelInfo, except that a request services cancels stays pending instead
   * of rejecting. Resolving instead would run services' chained step, which clears the flag of a
   * restart under way. services bounds its own wait (kernelInfoTimeout); connectedInfo asks again
   * every REMOTE_INFO_NUDGE_MS. Other failures reject as before. A caller that must learn of the
   * cancellation uses requestKernelInfoOrCancel.
   */
  override requestKernelInfo(): Promise<InfoReply> {
    return super.requestKernelInfo().catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith(CANCELED_KERNEL_INFO)) return new Promise<never>(() => undefined);
      throw error;
    });
  }

  /** services' requestKernelInfo unchanged: resolves undefined once disposed, rejects when a restart cancels the request first. */
  requestKernelInfoOrCancel(): Promise<InfoReply> {
    return super.requestKernelInfo();
  }
}
