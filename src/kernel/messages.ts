/**
 * Builders for the requests this client sends. Shapes come from `@jupyterlab/services`
 * (`KernelMessage.createMessage`), with the header's protocol version raised to the one we speak.
 * Message ids are Node's `randomUUID()`, which draws its randomness in batches: the services
 * package's own uuid4 asks the system for fresh random bytes for every id, which took 25–160 µs of
 * a 4 ms execute round trip (measured in alternating batches on one kernel).
 */
import { randomUUID } from "node:crypto";
import type { KernelMessage } from "@jupyterlab/services";
import { jupyterServices } from "./packages.js";

/** Protocol version written into our headers (ipykernel 7 also reports 5.3; features come from supported_features). */
export const PROTOCOL_VERSION = "5.3";

function stamp<T extends KernelMessage.IMessage>(message: T): T {
  message.header.version = PROTOCOL_VERSION;
  return message;
}

/** An execute_request on shell. */
export function executeRequest(session: string, content: KernelMessage.IExecuteRequestMsg["content"]): KernelMessage.IExecuteRequestMsg {
  return stamp(jupyterServices().KernelMessage.createMessage<KernelMessage.IExecuteRequestMsg>({ msgId: randomUUID(), session, channel: "shell", msgType: "execute_request", content }));
}

/** A kernel_info_request on shell. */
export function kernelInfoRequest(session: string): KernelMessage.IInfoRequestMsg {
  return stamp(jupyterServices().KernelMessage.createMessage<KernelMessage.IInfoRequestMsg>({ msgId: randomUUID(), session, channel: "shell", msgType: "kernel_info_request", content: {} }));
}

/** A complete_request on shell. */
export function completeRequest(session: string, code: string, cursorPos: number): KernelMessage.ICompleteRequestMsg {
  return stamp(jupyterServices().KernelMessage.createMessage<KernelMessage.ICompleteRequestMsg>({ msgId: randomUUID(), session, channel: "shell", msgType: "complete_request", content: { code, cursor_pos: cursorPos } }));
}

/** An interrupt_request on control (kernels whose interrupt_mode is "message"). */
export function interruptRequest(session: string): KernelMessage.IInterruptRequestMsg {
  return stamp(jupyterServices().KernelMessage.createMessage<KernelMessage.IInterruptRequestMsg>({ msgId: randomUUID(), session, channel: "control", msgType: "interrupt_request", content: {} }));
}

/** The input_reply answering `request`. */
export function inputReply(session: string, request: KernelMessage.IInputRequestMsg, value: string): KernelMessage.IInputReplyMsg {
  return stamp(jupyterServices().KernelMessage.createMessage<KernelMessage.IInputReplyMsg>({
    msgId: randomUUID(), session, channel: "stdin", msgType: "input_reply", content: { status: "ok", value }, parentHeader: request.header,
  }));
}

/**
 * A shutdown_request on control. The services package has no message type for it (its kernels shut
 * down over REST), so the header and layout come from createMessage and only the type is renamed.
 */
export function shutdownRequest(session: string, restart: boolean): KernelMessage.IMessage {
  const message = interruptRequest(session) as unknown as KernelMessage.IMessage;
  (message.header as { msg_type: string }).msg_type = "shutdown_request";
  (message as { content: unknown }).content = { restart };
  return message;
}

/** A stream message on iopub that albedo writes itself into `parent`'s outputs (to stderr): a note about the execution, never from the kernel. */
export function noteOutput(parent: KernelMessage.IExecuteRequestMsg, text: string): KernelMessage.IStreamMsg {
  return stamp(jupyterServices().KernelMessage.createMessage<KernelMessage.IStreamMsg>({
    msgId: randomUUID(), session: parent.header.session, channel: "iopub", msgType: "stream", parentHeader: parent.header, content: { name: "stderr", text },
  }));
}
