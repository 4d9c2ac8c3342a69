/**
 * The runtime end of the RPC channel of a remote kernel (K-12): the comm `albedo.rpc` on the
 * kernel's own Jupyter connection. Kernel -> runtime requests arrive as comm messages (iopub);
 * replies go back as comm messages on shell, each routed by its caller's need: the main shell for
 * an awaited call (ipykernel >= 7.4 serves comm messages there while a cell awaits), the comm's
 * subshell for a blocking call (the main thread may be the one blocked). Messages on any other comm
 * are ignored.
 */
import type { KernelConnection, KernelMessage } from "@jupyterlab/services";
import { jupyterServices } from "../packages.js";
import { RPC_HELLO_METHOD } from "../../rpc/index.js";
import { withDeadline } from "./deadline.js";
import { RemoteKernelError } from "./errors.js";
import { REMOTE_BOOTSTRAP_TIMEOUT_MS, REMOTE_SUBSHELL_TIMEOUT_MS } from "./limits.js";
import type { Log } from "../../platform/index.js";

/** The comm target the kernel package registers and the runtime opens. */
export const RPC_COMM_TARGET = "albedo.rpc";
/** The request member a blocking call sets, and its value: answer on the comm's subshell. */
export const RPC_REPLY_MEMBER = "reply";
export const RPC_REPLY_SUBSHELL = "subshell";

/** Where a reply goes: the main shell (awaited calls, notifications) or the comm's subshell (blocking calls). */
export type ReplyRoute = "shell" | "subshell";

export interface RpcCommOptions {
  readonly connection: KernelConnection;
  /** The comm's open data: the session secret, the catalog and the channel's bounds. */
  readonly openData: Readonly<Record<string, unknown>>;
  /** One message from the kernel as the JSON frame the dispatcher reads, with where its reply must go. */
  readonly onMessage: (body: Buffer, route: ReplyRoute) => void;
  readonly log?: Log;
}

export class RpcComm {
  private closed = false;

  private constructor(
    private readonly connection: KernelConnection,
    private readonly commId: string,
    private readonly subshellId: string,
    private readonly log: Log,
  ) {}

  /**
   * Makes the comm's subshell, opens the comm with `openData` and resolves once the kernel said hello
   * on it. Throws RemoteKernelError("bootstrap") when the kernel refuses or stays silent.
   */
  static async open(options: RpcCommOptions): Promise<RpcComm> {
    const { connection } = options;
    const log = options.log ?? (() => undefined);
    refuseKernelOpenedComms(connection, log);
    const created = await withDeadline(connection.requestCreateSubshell({}).done, REMOTE_SUBSHELL_TIMEOUT_MS, "create_subshell_request", "REMOTE_SUBSHELL_TIMEOUT_MS");
    const subshellId = created.content.subshell_id;
    const handle = connection.createComm(RPC_COMM_TARGET);
    const channel = new RpcComm(connection, handle.commId, subshellId, log);
    let hello!: () => void;
    let refused!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => ((hello = resolve), (refused = reject)));
    // Never a promise from onMsg: services waits for it before it reads the next kernel message.
    handle.onMsg = (message) => {
      channel.receive(message, options.onMessage, hello);
    };
    handle.onClose = () => {
      channel.closed = true;
      refused(new RemoteKernelError("bootstrap", "the kernel closed the albedo.rpc comm (it did not accept the session secret, or a channel was already open)"));
    };
    handle.open({ ...options.openData } as Parameters<typeof handle.open>[0]).dispose();
    await withDeadline(ready, REMOTE_BOOTSTRAP_TIMEOUT_MS, "the albedo.rpc comm's hello", "REMOTE_BOOTSTRAP_TIMEOUT_MS");
    return channel;
  }

  /** Sends one reply or notification to the kernel on `route`. Never throws; a closed channel drops it. */
  send(text: string, route: ReplyRoute): void {
    if (this.closed || this.connection.isDisposed) return;
    const message = jupyterServices().KernelMessage.createMessage<KernelMessage.ICommMsgMsg<"shell">>({
      msgType: "comm_msg", channel: "shell", session: this.connection.clientId, username: this.connection.username,
      subshellId: route === "subshell" ? this.subshellId : null,
      content: { comm_id: this.commId, data: JSON.parse(text) as KernelMessage.ICommMsgMsg["content"]["data"] },
    });
    try {
      // The future would settle only on an idle status for this message, which a kernel whose cell
      // awaits never sends (and the kernel package suppresses), so it is disposed at once.
      this.connection.sendShellMessage(message, false, true).dispose();
    } catch (error) {
      this.log("warn", "rpc comm: reply not sent", { error: String(error) });
    }
  }

  /** Stops sending; the kernel side goes with its kernel (restart or shutdown). */
  close(): void {
    this.closed = true;
  }

  private receive(message: KernelMessage.ICommMsgMsg, onMessage: RpcCommOptions["onMessage"], hello: () => void): void {
    const data = message.content.data as Record<string, unknown> | undefined;
    if (typeof data !== "object" || data === null || Array.isArray(data)) return;
    // The kernel's hello is the readiness signal; it also goes on to the dispatcher, which sends cancels to its sender.
    if (data.method === RPC_HELLO_METHOD && !("id" in data)) hello();
    onMessage(Buffer.from(JSON.stringify(data), "utf8"), data[RPC_REPLY_MEMBER] === RPC_REPLY_SUBSHELL ? "subshell" : "shell");
  }
}

/** The runtime opens the channel; a comm the kernel opens on the same target (user code) is closed unread. */
function refuseKernelOpenedComms(connection: KernelConnection, log: Log): void {
  connection.registerCommTarget(RPC_COMM_TARGET, (comm) => {
    log("warn", "rpc comm: closed an albedo.rpc comm opened from the kernel side; only the runtime's own comm carries calls", { comm: comm.commId });
    comm.close().dispose();
  });
}
