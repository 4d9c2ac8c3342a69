import type { Kernel, KernelMessage } from "@jupyterlab/services";
import { kernelDiedError } from "../errors.js";
import { REMOTE_INFO_NUDGE_MS } from "./limits.js";

type InfoReply = KernelMessage.IInfoReplyMsg | undefined;

/** What connectedInfo reads of a services connection (a KernelConnection is one). */
export interface InfoSource {
  readonly isDisposed: boolean;
  readonly connectionStatus: Kernel.ConnectionStatus;
  readonly connectionStatusChanged: {
    connect(slot: (sender: unknown, status: Kernel.ConnectionStatus) => void): boolean;
    disconnect(slot: (sender: unknown, status: Kernel.ConnectionStatus) => void): boolean;
  };
  /** Settles once both the shell reply and the iopub idle of one kernel_info_request arrived; one that a restart cancels may stay pending. */
  requestKernelInfo(): Promise<InfoReply>;
}

/**
 * The first complete kernel_info answer (reply and idle) once the connection is (back) up, asking
 * again every REMOTE_INFO_NUDGE_MS: a request whose iopub status was published before the server's
 * iopub socket rejoined the kernel never completes. Throws kernel_died when services gives up the
 * connection. Callers bound the whole wait (REMOTE_READY_TIMEOUT_MS).
 */
export async function connectedInfo(connection: InfoSource): Promise<InfoReply> {
  let answered!: (reply: InfoReply) => void;
  const answer = new Promise<{ reply: InfoReply }>((resolve) => (answered = (reply) => resolve({ reply })));
  for (;;) {
    if (connection.isDisposed) throw kernelDiedError("the remote kernel's connection closed while it started");
    // services gives up reconnecting after a few attempts, and says so with this status.
    if (connection.connectionStatus === "disconnected") throw kernelDiedError("lost the connection to the server and could not reconnect");
    // Services refuses to send while it reconnects; a request lost with a dropped socket is replaced after the next connect.
    if (connection.connectionStatus === "connected") void connection.requestKernelInfo().then(answered, () => undefined);
    const next = await Promise.race([answer, statusChangeOrNudge(connection)]);
    if (next !== undefined) return next.reply;
  }
}

/** Resolves at the connection's next status change or after REMOTE_INFO_NUDGE_MS, whichever is first. */
function statusChangeOrNudge(connection: InfoSource): Promise<undefined> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      connection.connectionStatusChanged.disconnect(done);
      resolve(undefined);
    };
    const timer = setTimeout(done, REMOTE_INFO_NUDGE_MS);
    connection.connectionStatusChanged.connect(done);
  });
}
