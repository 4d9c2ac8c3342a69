/**
 * One image judged by its bytes (I-1): the claimed type must match the magic number, the header's
 * size must stay under the bounds, and the whole image must decode to that size. A bad image is a
 * refusal with a note, never a throw.
 */
import { createHash } from "node:crypto";
import { humanSize } from "../json/index.js";
import { base64DecodedLength, decodeBase64, formatName, isImageMime, leadingHex, sniffImage, SVG_MIME, vipsFormat, type ImageMime } from "./formats.js";
import { MAX_DECODER_MESSAGE_CHARS, MAX_IMAGE_BYTES, MAX_IMAGE_EDGE_PX, MAX_IMAGE_PIXELS } from "./limits.js";
import { loadSharp, type Sharp } from "./sharp.js";

/** An image whose bytes were checked; `sha256` (hex) names its content. */
export interface CheckedImage {
  readonly mime: ImageMime;
  readonly bytes: Buffer;
  readonly width: number;
  readonly height: number;
  readonly sha256: string;
}

/** Why an image was not kept. */
export type ImageRefusal = "unsupported" | "not_base64" | "too_large" | "bad_magic" | "bomb" | "undecodable";

/** An image not kept, and the note that says why. */
export interface RefusedImage {
  readonly ok: false;
  readonly reason: ImageRefusal;
  readonly note: string;
}

export type ImageCheck = { readonly ok: true; readonly image: CheckedImage } | RefusedImage;

/** JPEG quality of a scaled JPEG: visually lossless for plots and photos at a third of the bytes of 100. */
const SCALED_JPEG_QUALITY = 85;
/** WebP quality of a scaled WebP. */
const SCALED_WEBP_QUALITY = 85;
/** zlib level of a scaled PNG: level 1 costs half the time of the default 6 for a few percent more bytes on plots. */
const SCALED_PNG_COMPRESSION = 1;
/**
 * The resampling kernel of a scale-down: Lanczos with two lobes. sharp's default of three lobes took
 * half as long again for a 3000 × 2000 plot (about 30 ms against 20 here) with no difference to see
 * at these factors (the image is at most a few times too large).
 */
const SCALE_KERNEL = "lanczos2";
/** The long edge, in pixels, a decode that only confirms an image is whole shrinks to: every byte is read, few pixels are kept. */
const CONFIRM_EDGE_PX = 64;

const refuse = (reason: ImageRefusal, note: string): RefusedImage => ({ ok: false, reason, note });

/** Checks `data` (base64 text or the bytes) as an image of type `mime`; never throws for bad input. */
export function checkImage(mime: string, data: string | Buffer): Promise<ImageCheck> {
  return prepareImage(mime, data, Number.POSITIVE_INFINITY);
}

/** `image` itself when its long edge is at most `maxEdge`, else a scaled copy (PNG, JPEG and WebP keep their type; GIF becomes PNG); a refusal only when the copy is over MAX_IMAGE_BYTES. */
export async function scaleDown(image: CheckedImage, maxEdge = MAX_IMAGE_EDGE_PX): Promise<ImageCheck> {
  if (Math.max(image.width, image.height) <= maxEdge) return { ok: true, image };
  return encodeScaled(await loadSharp(), image.bytes, scaledType(image.mime), maxEdge);
}

/** The type a scaled image is encoded as: its own, but GIF becomes PNG (lossless, and sharp's GIF encoder must quantize). */
function scaledType(mime: ImageMime): ImageMime {
  return mime === "image/gif" ? "image/png" : mime;
}

/** checkImage, then scaled to `maxEdge` in the same decode: what collectImages keeps. */
export async function prepareImage(mime: string, data: string | Buffer, maxEdge: number): Promise<ImageCheck> {
  const input = readInput(mime, data);
  if (!input.ok) return input;
  const sharp = await loadSharp();
  const header = await readHeader(sharp, input.bytes, input.mime);
  if (!header.ok) return header;
  const { width, height, animated } = header;
  // Only the first frame of an animation is decoded, so only that frame is kept: as a PNG.
  if (animated) return encodeScaled(sharp, input.bytes, "image/png", maxEdge);
  if (Math.max(width, height) > maxEdge) return encodeScaled(sharp, input.bytes, scaledType(input.mime), maxEdge);
  const whole = await decodes(sharp, input.bytes);
  if (whole !== undefined) return whole;
  return { ok: true, image: checked(input.mime, input.bytes, width, height) };
}

type Input = { readonly ok: true; readonly mime: ImageMime; readonly bytes: Buffer } | RefusedImage;

/** The bytes, when the type is kept, they are base64 (if text), within MAX_IMAGE_BYTES and start with the claimed type's magic number. */
function readInput(mime: string, data: string | Buffer): Input {
  if (mime === SVG_MIME) return refuse("unsupported", "SVG is not kept as an image (it is a document that can script and link; PNG, JPEG, GIF and WebP are)");
  if (!isImageMime(mime)) return refuse("unsupported", `${mime.slice(0, 80)} is not an image type albedo keeps (PNG, JPEG, GIF, WebP)`);
  const dropped = typeof data === "string" ? DROPPED_IMAGE.exec(data) : null;
  if (dropped !== null) return tooLarge(Number(dropped[1]));
  // Padding makes the estimate up to 2 bytes high: decode anything that could still fit, then judge exactly.
  if (typeof data === "string" && !mayBeImage(data)) return tooLarge(base64DecodedLength(data));
  const bytes = typeof data === "string" ? decodeBase64(data) : data;
  if (bytes === undefined) return refuse("not_base64", `the ${formatName(mime)} data is not base64`);
  if (bytes.length > MAX_IMAGE_BYTES) return tooLarge(bytes.length);
  const actual = sniffImage(bytes);
  if (actual !== mime) {
    const seen = actual === undefined ? `no image format (they start ${leadingHex(bytes) || "empty"})` : `a ${formatName(actual)}`;
    return refuse("bad_magic", `bad magic bytes: claimed ${mime} but the bytes are ${seen}`);
  }
  return { ok: true, mime, bytes };
}

/** How an output holds an image representation dropped for passing MAX_IMAGE_BYTES before it was checked (see droppedImage). */
const DROPPED_IMAGE = /^\[albedo: an image of (\d{1,15}) bytes dropped: over MAX_IMAGE_BYTES\]$/;

/**
 * Whether base64 `text` can still decode to an image within MAX_IMAGE_BYTES: a bound on a
 * kernel's outputs leaves such a representation whole, so the image is judged, and kept or
 * refused, by its own bound.
 */
export function mayBeImage(text: string): boolean {
  // Counted only as far as the bound: a kernel may send hundreds of megabytes.
  const maxChars = Math.ceil(((MAX_IMAGE_BYTES + 2) * 4) / 3);
  if (text.length <= maxChars) return true;
  let chars = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x20 && ++chars > maxChars) return false;
  return true;
}

/** What stands in an output for an image representation that failed mayBeImage (its size as its length tells it): the check refuses it naming MAX_IMAGE_BYTES. */
export function droppedImage(text: string): string {
  return `[albedo: an image of ${Math.floor((text.length * 3) / 4)} bytes dropped: over MAX_IMAGE_BYTES]`;
}

function tooLarge(bytes: number): RefusedImage {
  return refuse("too_large", `${humanSize(bytes)} is over MAX_IMAGE_BYTES (${humanSize(MAX_IMAGE_BYTES)})`);
}

type Header = { readonly ok: true; readonly width: number; readonly height: number; readonly animated: boolean } | RefusedImage;

/** The size the header declares (of an animation, its first frame), refused as a bomb past MAX_IMAGE_PIXELS before anything decodes. */
async function readHeader(sharp: Sharp, bytes: Buffer, mime: ImageMime): Promise<Header> {
  let meta;
  try {
    // The header alone is read here, so sharp's own pixel limit (which would refuse a bomb without saying its size) is off: the bound is judged below.
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (error) {
    return refuse("undecodable", `the ${formatName(mime)} header does not read: ${decoderMessage(error)}`);
  }
  if (meta.format !== vipsFormat(mime)) return refuse("bad_magic", `bad magic bytes: claimed ${mime} but the decoder reads ${meta.format}`);
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (!(width > 0 && height > 0)) return refuse("undecodable", `the ${formatName(mime)} header declares no size`);
  if (width * height > MAX_IMAGE_PIXELS) {
    return refuse("bomb", `a decompression bomb: the header declares ${width}×${height} (${megapixels(width * height)}) in ${humanSize(bytes.length)}; MAX_IMAGE_PIXELS is ${megapixels(MAX_IMAGE_PIXELS)}`);
  }
  return { ok: true, width, height, animated: (meta.pages ?? 1) > 1 };
}

/** The input options of every decode: the bomb guard again (libvips checks it from the header too) and any decoder warning (a truncated file) fatal. */
const DECODE = { limitInputPixels: MAX_IMAGE_PIXELS, failOn: "warning" } as const;

/** A refusal when the bytes do not decode whole; undefined when they do. */
async function decodes(sharp: Sharp, bytes: Buffer): Promise<ImageCheck | undefined> {
  try {
    await sharp(bytes, DECODE).resize(CONFIRM_EDGE_PX, CONFIRM_EDGE_PX, { fit: "inside" }).raw().toBuffer();
    return undefined;
  } catch (error) {
    return decodeRefusal(error);
  }
}

/** The image decoded (which confirms it is whole), scaled to fit `maxEdge` and encoded as `out`. */
async function encodeScaled(sharp: Sharp, bytes: Buffer, out: ImageMime, maxEdge: number): Promise<ImageCheck> {
  const decoded = sharp(bytes, DECODE);
  const pipeline = Number.isFinite(maxEdge) ? decoded.resize(maxEdge, maxEdge, { fit: "inside", withoutEnlargement: true, kernel: SCALE_KERNEL }) : decoded;
  const encoder =
    out === "image/jpeg" ? pipeline.jpeg({ quality: SCALED_JPEG_QUALITY })
    : out === "image/webp" ? pipeline.webp({ quality: SCALED_WEBP_QUALITY })
    : pipeline.png({ compressionLevel: SCALED_PNG_COMPRESSION });
  try {
    const { data, info } = await encoder.toBuffer({ resolveWithObject: true });
    if (data.length > MAX_IMAGE_BYTES) return refuse("too_large", `scaled to ${info.width}×${info.height} it is still ${humanSize(data.length)}, over MAX_IMAGE_BYTES (${humanSize(MAX_IMAGE_BYTES)})`);
    return { ok: true, image: checked(out, data, info.width, info.height) };
  } catch (error) {
    return decodeRefusal(error);
  }
}

function decodeRefusal(error: unknown): ImageCheck {
  const message = decoderMessage(error);
  if (/pixel limit/i.test(message)) return refuse("bomb", `a decompression bomb: ${message}`);
  return refuse("undecodable", `does not decode (truncated or corrupt): ${message}`);
}

function checked(mime: ImageMime, bytes: Buffer, width: number, height: number): CheckedImage {
  return { mime, bytes, width, height, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** The decoder's message on one line of at most MAX_DECODER_MESSAGE_CHARS: it may quote the image's own bytes. */
export function decoderMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim().slice(0, MAX_DECODER_MESSAGE_CHARS);
}

function megapixels(pixels: number): string {
  return `${(pixels / 1_000_000).toFixed(1)} megapixels`;
}
