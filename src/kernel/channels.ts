/**
 * The four message sockets of one kernel connection (K-2): shell, control and stdin are DEALERs,
 * iopub is a SUB. Every received message passes signature verification before delivery.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { KernelMessage } from "@jupyterlab/services";
import { zeromq, type Zeromq as zmq } from "../platform/index.js";
import { channelAddress, type ConnectionInfo } from "./connection.js";
import { kernelBytesInFlight, type BudgetAccount, type KernelByteBudget } from "./budget.js";
import type { Signer } from "./signing.js";
import {
  KERNEL_RECEIVE_HIGH_WATER_MARK, KERNEL_RECONNECT_CHECK_MS, MAX_KERNEL_CONTROL_MESSAGE_BYTES, MAX_KERNEL_MESSAGE_BYTES, MAX_KERNEL_REPLY_BYTES, MAX_OUTPUT_MESSAGE_BYTES,
} from "./limits.js";
import { deserialize, serialize } from "./wire.js";

export type SendChannel = "shell" | "control" | "stdin";
export type ReceiveChannel = SendChannel | "iopub";

/** The largest message ZeroMQ takes from the kernel on each socket (ZMQ_MAXMSGSIZE), and its name; a larger one drops the connection. */
export const RECEIVE_BOUNDS: Readonly<Record<ReceiveChannel, { readonly name: string; readonly bytes: number }>> = {
  iopub: { name: "MAX_KERNEL_MESSAGE_BYTES", bytes: MAX_KERNEL_MESSAGE_BYTES },
  shell: { name: "MAX_KERNEL_REPLY_BYTES", bytes: MAX_KERNEL_REPLY_BYTES },
  control: { name: "MAX_KERNEL_CONTROL_MESSAGE_BYTES", bytes: MAX_KERNEL_CONTROL_MESSAGE_BYTES },
  stdin: { name: "MAX_KERNEL_CONTROL_MESSAGE_BYTES", bytes: MAX_KERNEL_CONTROL_MESSAGE_BYTES },
};

export interface ChannelHandlers {
  onMessage(message: KernelMessage.IMessage): void;
  /** A received message that failed framing or signature checks; it was not delivered. */
  onDropped(channel: ReceiveChannel, reason: string): void;
  /**
   * ZeroMQ dropped `channel`'s connection for a message over its bound (RECEIVE_BOUNDS); it is
   * connected again, and what the kernel sent on it meanwhile is lost.
   */
  onConnectionLost(channel: ReceiveChannel): void;
  /**
   * The process-wide budget of kernel bytes in flight cut this connection, the one holding the
   * most (see KernelByteBudget): every socket is closed already; `reason` says why.
   */
  onCut(reason: string): void;
}

export class KernelChannels {
  private readonly dealers: Record<SendChannel, zmq.Dealer>;
  private readonly iopub: zmq.Subscriber;
  private readonly sendChains: Record<SendChannel, Promise<void>>;
  /** Pending reconnect checks, cleared on close. */
  private readonly checks = new Set<NodeJS.Timeout>();
  private closed = false;
  /** Whether iopub's read loop waits on an empty queue: false while a message is taken in or waits its turn. */
  private iopubWaiting = false;
  /** This connection's share of the process-wide budget of kernel bytes in flight. */
  private readonly account: BudgetAccount;

  /**
   * Connects all four sockets. The shell and stdin DEALERs share `sessionId` as routing id because
   * the kernel routes input_request to the identity that sent the execute_request. iopub subscribes
   * to everything and to `welcomeTopic` as well: ipykernel may not welcome a lone "" subscription.
   */
  constructor(
    info: ConnectionInfo,
    private readonly signer: Signer,
    sessionId: string,
    welcomeTopic: string,
    private readonly handlers: ChannelHandlers,
    budget: KernelByteBudget = kernelBytesInFlight,
  ) {
    this.account = budget.open(sessionId, (reason) => {
      this.close();
      handlers.onCut(reason);
    });
    // What ZeroMQ may hold of what the kernel sent: few messages, each within its socket's bound (see the limits).
    const receiving = (channel: ReceiveChannel) => ({ linger: 0, maxMessageSize: RECEIVE_BOUNDS[channel].bytes, receiveHighWaterMark: KERNEL_RECEIVE_HIGH_WATER_MARK });
    const dealer = (channel: SendChannel): zmq.Dealer => {
      const socket = new (zeromq().Dealer)({ ...receiving(channel), routingId: sessionId });
      this.connect(channel, socket, channelAddress(info, channel));
      return socket;
    };
    this.dealers = { shell: dealer("shell"), control: dealer("control"), stdin: dealer("stdin") };
    this.iopub = new (zeromq().Subscriber)(receiving("iopub"));
    this.iopub.subscribe("");
    this.iopub.subscribe(welcomeTopic);
    this.connect("iopub", this.iopub, channelAddress(info, "iopub"));
    this.sendChains = { shell: Promise.resolve(), control: Promise.resolve(), stdin: Promise.resolve() };
    for (const channel of ["shell", "control", "stdin"] as const) void this.readLoop(channel, this.dealers[channel]);
    void this.readLoop("iopub", this.iopub);
  }

  /** Signs and queues `message` on `channel`; sends on one socket never overlap (zeromq allows one at a time). */
  send(channel: SendChannel, message: KernelMessage.IMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`kernel channels are closed; cannot send ${message.header.msg_type}`));
    const frames = serialize(message, this.signer);
    const socket = this.dealers[channel];
    const sent = this.sendChains[channel].then(() => socket.send(frames));
    this.sendChains[channel] = sent.catch(() => undefined);
    return sent;
  }

  /** Whether every message the kernel sent on iopub so far was taken in (none waits in ZeroMQ's queue or for its turn). */
  get iopubDrained(): boolean {
    return this.iopubWaiting;
  }

  /** Closes every socket without lingering; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.account.close();
    for (const check of this.checks) clearTimeout(check);
    for (const socket of [...Object.values(this.dealers), this.iopub]) socket.close();
  }

  /**
   * Connects `socket` and keeps it connected: a disconnect ZeroMQ does not follow with a retry of
   * its own within KERNEL_RECONNECT_CHECK_MS is one it made for a message over
   * MAX_KERNEL_MESSAGE_BYTES (it never reconnects after that), so it is connected again here.
   */
  private connect(channel: ReceiveChannel, socket: zmq.Dealer | zmq.Subscriber, address: string): void {
    let check: NodeJS.Timeout | undefined;
    const events = socket.events;
    events.on("disconnect", () => {
      if (this.closed) return;
      this.checks.delete(check!);
      clearTimeout(check);
      check = setTimeout(() => {
        this.checks.delete(check!);
        if (this.closed) return;
        socket.disconnect(address);
        socket.connect(address);
        this.handlers.onConnectionLost(channel);
      }, KERNEL_RECONNECT_CHECK_MS);
      this.checks.add(check);
    });
    events.on("connect:retry", () => {
      this.checks.delete(check!);
      clearTimeout(check);
    });
    socket.connect(address);
  }

  private async readLoop(channel: ReceiveChannel, socket: zmq.Dealer | zmq.Subscriber): Promise<void> {
    try {
      // One awaited receive() per message, as the RPC server reads (see its receive loop); close() fails the pending one.
      for (;;) {
        if (channel === "iopub") this.iopubWaiting = true;
        if (!socket.readable) this.account.drained(channel);
        // A receive() with a message queued settles before any timer can run, so this is false then.
        const frames = await socket.receive();
        if (channel === "iopub") this.iopubWaiting = false;
        if (this.closed) return;
        // Charged before it is decoded: a charge past the budget may cut this very connection (closed then).
        const bytes = messageBytes(frames);
        if (!this.account.take(channel, frames, bytes, socket.readable)) return;
        // A large one is decoded on a later turn: the loops of other sockets that took one in the same
        // turn charge theirs first, so the budget sees every flood before any of them is decoded.
        if (bytes > MAX_OUTPUT_MESSAGE_BYTES) {
          await nextTurn();
          if (this.closed) return;
        }
        const decoded = deserialize(frames, this.signer, channel);
        if (decoded.ok) this.handlers.onMessage(decoded.message);
        else this.handlers.onDropped(channel, decoded.reason);
        // receive() resolves at once while messages wait, hundreds in a row: give the event loop (other
        // sessions, HTTP, timers) a turn after each, so a kernel flooding large ones holds up no one else.
        await nextTurn();
        if (this.closed) return;
      }
    } catch (error) {
      if (!this.closed) this.handlers.onDropped(channel, `socket read failed: ${String(error)}`);
    }
  }
}

function messageBytes(frames: readonly Buffer[]): number {
  let bytes = 0;
  for (const frame of frames) bytes += frame.length;
  return bytes;
}
