import type { KernelConnection, KernelMessage } from "@jupyterlab/services";
import { kernelDiedError } from "../errors.js";

/** The kernel_info reply once the connection is (back) up; services refuses to send it while it reconnects. */
export async function connectedInfo(connection: KernelConnection): Promise<KernelMessage.IInfoReplyMsg | undefined> {
  for (;;) {
    if (connection.isDisposed) throw kernelDiedError("the remote kernel's connection closed while it started");
    // services gives up reconnecting after a few attempts, and says so with this status.
    if (connection.connectionStatus === "disconnected") throw kernelDiedError("lost the connection to the server and could not reconnect");
    if (connection.connectionStatus === "connected") {
      try {
        return await connection.requestKernelInfo();
      } catch {
        // the socket dropped again between the check and the send: wait for the next connect
      }
    }
    await new Promise<void>((resolve) => {
      const changed = () => {
        connection.connectionStatusChanged.disconnect(changed);
        resolve();
      };
      connection.connectionStatusChanged.connect(changed);
    });
  }
}
