/**
 * Bounds on what a kernel sends back for an execution (B). A kernel can print gigabytes in one
 * message; each output is cut to MAX_OUTPUT_MESSAGE_BYTES as it arrives, before anything else in
 * the runtime holds it, so no consumer (daemon, stream, console) keeps more than that per message,
 * besides the images of a display bundle, each within its own bound (MAX_IMAGE_BYTES).
 */
import { droppedImage, isImageMime, mayBeImage } from "../images/index.js";
import { boundJson, humanSize, jsonBytes, type DropMarker } from "../json/index.js";
import type { ExecuteOutput, ExecuteReply } from "./kernel.js";
import { MAX_OUTPUT_MESSAGE_BYTES } from "./limits.js";

/** The stream message's metadata member that counts the UTF-8 bytes of text the kernel left out. */
export const DROPPED_BYTES_METADATA = "albedo_dropped_bytes";

/**
 * The marker text for output cut away because it passed `limitName` (`limit` bytes) `where`:
 * "[albedo: 94.2 MB of output dropped: more than MAX_OUTPUT_MESSAGE_BYTES (2.0 MB) in one output]".
 */
export function outputDropMarker(limitName: string, limit: number, where: string): DropMarker {
  return (dropped) => `[albedo: ${humanSize(dropped)} of output dropped: more than ${limitName} (${humanSize(limit)}) ${where}]`;
}

const MESSAGE_MARKER = outputDropMarker("MAX_OUTPUT_MESSAGE_BYTES", MAX_OUTPUT_MESSAGE_BYTES, "in one output");

/** An output cut to MAX_OUTPUT_MESSAGE_BYTES, with its content's JSON size and the bytes cut away (by the kernel too). */
export interface BoundedOutput {
  readonly output: ExecuteOutput;
  readonly bytes: number;
  readonly droppedBytes: number;
}

/** Outputs whose content carries a display bundle (`data`), where images are. */
const BUNDLE_TYPES: ReadonlySet<string> = new Set(["display_data", "execute_result", "update_display_data"]);

/**
 * `output` itself when its content fits MAX_OUTPUT_MESSAGE_BYTES and the kernel left nothing out,
 * else a copy whose content is cut, or whose text ends with a marker for what the kernel left out
 * (header and parent kept). A display bundle's raster image representations are not part of
 * that bound: each is judged before any cut (a cut image is no image), kept whole while it can be
 * an image within MAX_IMAGE_BYTES, else replaced by a note the image check reports as over it.
 */
export function boundOutput(output: ExecuteOutput): BoundedOutput {
  const data = BUNDLE_TYPES.has(output.header.msg_type) ? (output.content as { data?: unknown }).data : undefined;
  const images = isRecord(data) ? Object.keys(data).filter((key) => isImageMime(key) && typeof data[key] === "string") : [];
  if (images.length === 0) return boundContent(output);
  const bundle = data as Record<string, unknown>;
  const others = Object.fromEntries(Object.entries(bundle).filter(([key]) => !images.includes(key)));
  const rest = boundContent({ ...output, content: { ...output.content, data: others } } as ExecuteOutput);
  const cutData = (rest.output.content as { data?: unknown }).data;
  const kept = isRecord(cutData) ? cutData : {};
  let droppedBytes = rest.droppedBytes;
  const fitted = Object.fromEntries(Object.keys(bundle).flatMap((key): [string, unknown][] => {
    if (!images.includes(key)) return Object.hasOwn(kept, key) ? [[key, kept[key]]] : [];
    const text = bundle[key] as string;
    if (mayBeImage(text)) return [[key, text]];
    droppedBytes += text.length;
    return [[key, droppedImage(text)]];
  }));
  const content = { ...rest.output.content, data: fitted };
  const bytes = jsonBytes(content);
  return carrying({ output: { ...output, content } as ExecuteOutput, bytes, droppedBytes }, bytes);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** boundOutput for content bounded as a whole. */
function boundContent(output: ExecuteOutput): BoundedOutput {
  const left = keptOutByKernel(output);
  const marker = left === 0 ? MESSAGE_MARKER : (dropped: number) => MESSAGE_MARKER(dropped + left);
  const bounded = boundJson(output.content, MAX_OUTPUT_MESSAGE_BYTES, marker);
  const text = (output.content as { text?: unknown }).text;
  const sent = output.header.msg_type === "stream" && typeof text === "string" ? Buffer.byteLength(text) : undefined;
  if (bounded.droppedBytes === 0 && left === 0) return carrying({ output, bytes: bounded.bytes, droppedBytes: 0 }, sent ?? bounded.bytes);
  let content = bounded.value as { text?: unknown };
  // The kernel's cut left room for the marker line, so the text with it still fits (boundJson marked any cut of its own).
  if (bounded.droppedBytes === 0 && typeof content.text === "string") content = { ...content, text: withMarker(content.text, MESSAGE_MARKER(left)) };
  const bytes = jsonBytes(content);
  return carrying({ output: { ...output, content } as ExecuteOutput, bytes, droppedBytes: bounded.droppedBytes + left }, sent === undefined ? bytes : sent - bounded.droppedBytes);
}

/** What each bounded output still carries of what its kernel printed (see outputPayloadBytes). */
const payloads = new WeakMap<ExecuteOutput, number>();

function carrying(bounded: BoundedOutput, payload: number): BoundedOutput {
  payloads.set(bounded.output, payload);
  return bounded;
}

/**
 * Bytes of what the kernel printed that a bounded output still carries, its markers aside: a
 * stream's UTF-8 text, other outputs' content as JSON. Leaving the output out drops these bytes
 * (its cut ones were counted as it was bounded). Unbounded outputs count their content's JSON.
 */
export function outputPayloadBytes(output: ExecuteOutput): number {
  return payloads.get(output) ?? jsonBytes(output.content);
}

/** The bytes of a stream's text its kernel reports having left out (DROPPED_BYTES_METADATA); 0 when it reports none or nonsense. */
function keptOutByKernel(output: ExecuteOutput): number {
  if (output.header.msg_type !== "stream") return 0;
  const left = (output.metadata as Record<string, unknown> | undefined)?.[DROPPED_BYTES_METADATA];
  return typeof left === "number" && Number.isSafeInteger(left) && left > 0 ? left : 0;
}

/** `text` with `marker` on a line of its own at the end, as boundJson marks a cut string. */
function withMarker(text: string, marker: string): string {
  return `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${marker}\n`;
}

/** An execute_reply's content cut to MAX_OUTPUT_MESSAGE_BYTES (an error reply repeats the traceback). */
export function boundReply(content: ExecuteReply): ExecuteReply {
  return boundJson(content, MAX_OUTPUT_MESSAGE_BYTES, MESSAGE_MARKER).value;
}
