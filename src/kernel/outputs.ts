/**
 * Bounds on what a kernel sends back for an execution (B). A kernel can print gigabytes in one
 * message; each output is cut to MAX_OUTPUT_MESSAGE_BYTES as it arrives, before anything else in
 * the runtime holds it, so no consumer (daemon, stream, console) keeps more than that per message.
 */
import { boundJson, humanSize, type DropMarker } from "../json/index.js";
import type { ExecuteOutput, ExecuteReply } from "./kernel.js";

/** Bytes of one output's content as JSON (a stream chunk, a display bundle, a traceback); a larger one is cut with a marker. */
export const MAX_OUTPUT_MESSAGE_BYTES = 2 * 1024 * 1024;
/** Bytes of outputs a future keeps for an iterator that has not read them; the oldest go first past it. */
export const MAX_PENDING_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * The marker text for output cut away because it passed `limitName` (`limit` bytes) `where`:
 * "[albedo: 94.2 MB of output dropped: more than MAX_OUTPUT_MESSAGE_BYTES (2.0 MB) in one output]".
 */
export function outputDropMarker(limitName: string, limit: number, where: string): DropMarker {
  return (dropped) => `[albedo: ${humanSize(dropped)} of output dropped: more than ${limitName} (${humanSize(limit)}) ${where}]`;
}

const MESSAGE_MARKER = outputDropMarker("MAX_OUTPUT_MESSAGE_BYTES", MAX_OUTPUT_MESSAGE_BYTES, "in one output");

/** An output cut to MAX_OUTPUT_MESSAGE_BYTES, with its content's JSON size and the bytes cut away. */
export interface BoundedOutput {
  readonly output: ExecuteOutput;
  readonly bytes: number;
  readonly droppedBytes: number;
}

/** `output` itself when its content fits MAX_OUTPUT_MESSAGE_BYTES, else a copy whose content is cut (header and parent kept). */
export function boundOutput(output: ExecuteOutput): BoundedOutput {
  const bounded = boundJson(output.content, MAX_OUTPUT_MESSAGE_BYTES, MESSAGE_MARKER);
  if (bounded.droppedBytes === 0 && bounded.value === output.content) return { output, bytes: bounded.bytes, droppedBytes: 0 };
  return { output: { ...output, content: bounded.value } as ExecuteOutput, bytes: bounded.bytes, droppedBytes: bounded.droppedBytes };
}

/** An execute_reply's content cut to MAX_OUTPUT_MESSAGE_BYTES (an error reply repeats the traceback). */
export function boundReply(content: ExecuteReply): ExecuteReply {
  return boundJson(content, MAX_OUTPUT_MESSAGE_BYTES, MESSAGE_MARKER).value;
}
