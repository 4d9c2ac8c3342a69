/**
 * Reading a remote server's WebSocket frames (K-12, B). services' own decoder throws on a frame it
 * cannot read, from inside the socket's event, which ends the process; the server is not trusted,
 * so albedo decodes every frame here instead (services' serializer hook) and throws
 * RemoteFrameError with what is wrong, which the socket turns into the end of that one connection.
 * A frame is checked against the wire format the connection negotiated, then as a kernel message
 * with the fields services and albedo read from it.
 */
import type { KernelMessage } from "@jupyterlab/services";
import { parseJsonWellFormed } from "../../json/index.js";
import { jupyterServices } from "../packages.js";

/** The binary framing Jupyter Server 2 negotiates; without a subprotocol the legacy JSON framing is spoken. */
export const v1Protocol = (): string => jupyterServices().KernelMessage.supportedKernelWebSocketProtocols.v1KernelWebsocketJupyterOrg;

/** A frame that is not a kernel message; `reason` says why, in albedo's words (it never quotes the frame). */
export class RemoteFrameError extends Error {
  override readonly name = "RemoteFrameError";
  constructor(readonly reason: string) {
    super(reason);
  }
}

const CHANNELS = new Set(["shell", "iopub", "stdin", "control"]);
const HEADER_FIELDS = ["msg_id", "msg_type", "session", "username", "version"] as const;
/** Fields services reads from iopub contents without checking them, by message type (its validate.ts, kept in step). */
const IOPUB_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  stream: { name: "string", text: "string" },
  display_data: { data: "object", metadata: "object" },
  execute_input: { code: "string", execution_count: "number" },
  execute_result: { execution_count: "number", data: "object", metadata: "object" },
  error: { ename: "string", evalue: "string", traceback: "object" },
  status: { execution_state: "string" },
  clear_output: { wait: "boolean" },
  comm_open: { comm_id: "string", target_name: "string", data: "object" },
  comm_msg: { comm_id: "string", data: "object" },
  comm_close: { comm_id: "string" },
  shutdown_reply: { restart: "boolean" },
};
const EXECUTION_STATES = new Set(["starting", "idle", "busy", "restarting", "dead"]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The kernel message one frame carries (`data` as ws hands it with binaryType "arraybuffer"); throws RemoteFrameError. */
export function decodeFrame(data: unknown, protocol = ""): KernelMessage.IMessage {
  if (protocol !== v1Protocol() && protocol !== "") throw new RemoteFrameError("the server chose a WebSocket subprotocol albedo did not offer");
  const message = protocol === v1Protocol() ? decodeV1(data) : decodeLegacy(data);
  checkMessage(message);
  return message as unknown as KernelMessage.IMessage;
}

/** v1: an offset table (u64 little-endian count, then offsets), the channel, four JSON parts, then buffers. */
function decodeV1(data: unknown): Record<string, unknown> {
  if (!(data instanceof ArrayBuffer)) throw new RemoteFrameError(`a text frame on a connection that speaks ${v1Protocol()} (binary frames only)`);
  const view = new DataView(data);
  const count = data.byteLength >= 8 ? view.getBigUint64(0, true) : 0n;
  if (count < 6n || (count + 1n) * 8n > BigInt(data.byteLength)) throw new RemoteFrameError(`a binary frame that is not in the ${v1Protocol()} layout (its offset table does not fit it)`);
  const offsets = Array.from({ length: Number(count) }, (_, i) => Number(view.getBigUint64(8 * (i + 1), true)));
  if (!describesFrame(offsets, 8 * (offsets.length + 1), data.byteLength, true)) throw new RemoteFrameError(`a binary frame that is not in the ${v1Protocol()} layout (its offsets do not describe it)`);
  const part = (i: number) => data.slice(offsets[i], offsets[i + 1]);
  const json = (i: number) => parseJson(part(i), "a binary frame whose parts are not JSON");
  return {
    channel: text(part(0), "a binary frame whose channel is not UTF-8"),
    header: json(1), parent_header: json(2), metadata: json(3), content: json(4),
    buffers: offsets.slice(5, -1).map((_, i) => new DataView(part(5 + i))),
  };
}

/** Legacy: a text frame is the message as JSON; a binary one is a u32 big-endian table, the JSON, then buffers. */
function decodeLegacy(data: unknown): Record<string, unknown> {
  if (typeof data === "string") return asRecord(parseText(data), "a text frame that is JSON but not an object");
  if (!(data instanceof ArrayBuffer)) throw new RemoteFrameError("a frame of an unknown kind");
  const view = new DataView(data);
  const count = data.byteLength >= 4 ? view.getUint32(0) : 0;
  if (count < 2 || 4 * (count + 1) > data.byteLength) throw new RemoteFrameError("a binary frame that is not in the legacy layout (its offset table does not fit it)");
  const offsets = Array.from({ length: count }, (_, i) => view.getUint32(4 * (i + 1)));
  if (!describesFrame(offsets, 4 * (count + 1), data.byteLength, false)) throw new RemoteFrameError("a binary frame that is not in the legacy layout (its offsets do not describe it)");
  const ends = [...offsets.slice(1), data.byteLength];
  const message = asRecord(parseJson(data.slice(offsets[0], ends[0]), "a binary frame whose message is not JSON"), "a binary frame whose message is not an object");
  return { ...message, buffers: offsets.slice(1).map((start, i) => new DataView(data.slice(start, ends[i + 1]))) };
}

/** Offsets that start right after their table, never go back, and end at (v1) or within (legacy) the frame. */
function describesFrame(offsets: readonly number[], tableEnd: number, length: number, endsAtLength: boolean): boolean {
  if (offsets[0] !== tableEnd || offsets.some((offset, i) => i > 0 && offset < offsets[i - 1]!)) return false;
  const last = offsets[offsets.length - 1]!;
  return endsAtLength ? last === length : last <= length;
}

function checkMessage(message: Record<string, unknown>): void {
  if (typeof message.channel !== "string" || !CHANNELS.has(message.channel)) throw new RemoteFrameError("JSON that is not a Jupyter kernel message (no channel shell, iopub, stdin or control)");
  const header = asRecord(message.header, "a message without a header");
  for (const field of HEADER_FIELDS) if (typeof header[field] !== "string") throw new RemoteFrameError(`a message whose header has no ${field} string`);
  for (const field of ["parent_header", "metadata", "content"] as const) asRecord(message[field], `a message whose ${field} is not an object`);
  const content = message.content as Record<string, unknown>;
  const type = header.msg_type as string;
  const fields = message.channel === "iopub" && Object.hasOwn(IOPUB_FIELDS, type) ? IOPUB_FIELDS[type]! : {};
  for (const [field, kind] of Object.entries(fields)) {
    const value = content[field];
    if (kind === "object" ? value === undefined : typeof value !== kind) throw new RemoteFrameError(`an iopub ${type} message whose ${field} is not a ${kind}`);
  }
  if (type === "status" && !EXECUTION_STATES.has(content.execution_state as string)) throw new RemoteFrameError("an iopub status message with an unknown execution_state");
  // services reads supported_features of a kernel_info_reply in a promise nobody catches: anything but a list would end the process.
  if (type === "kernel_info_reply" && content.supported_features !== undefined && !Array.isArray(content.supported_features)) {
    throw new RemoteFrameError("a kernel_info_reply whose supported_features is not a list");
  }
}

function parseJson(bytes: ArrayBuffer, problem: string): unknown {
  return parseText(text(bytes, problem), problem);
}

function parseText(data: string, problem = "a text frame that is not JSON"): unknown {
  try {
    // The kernel is hostile: a lone surrogate it escaped becomes U+FFFD before anything stores or serves it.
    return parseJsonWellFormed(data);
  } catch {
    // The parser's message quotes the frame; albedo's reason does not.
    throw new RemoteFrameError(problem);
  }
}

function text(bytes: ArrayBuffer, problem: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new RemoteFrameError(problem);
  }
}

function asRecord(value: unknown, problem: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new RemoteFrameError(problem);
  // A key of this name would break services' own check of the message (it calls object.hasOwnProperty).
  if (Object.hasOwn(value, "hasOwnProperty")) throw new RemoteFrameError(problem);
  return value as Record<string, unknown>;
}
