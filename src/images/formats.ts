/** The image formats kept, told apart by their bytes; and the strict base64 a bundle carries them in. */

/** The raster types kept, in the order one display bundle's representations are preferred. */
export const IMAGE_MIMES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
export type ImageMime = (typeof IMAGE_MIMES)[number];
/** Not kept as an image: SVG is a document (scripts, links to files and URLs), not pixels. */
export const SVG_MIME = "image/svg+xml";

/** How each type is named to people, and what libvips calls the format. */
const FORMATS: Readonly<Record<ImageMime, { readonly name: string; readonly vips: string }>> = {
  "image/png": { name: "PNG", vips: "png" },
  "image/jpeg": { name: "JPEG", vips: "jpeg" },
  "image/gif": { name: "GIF", vips: "gif" },
  "image/webp": { name: "WebP", vips: "webp" },
};

export function isImageMime(mime: string): mime is ImageMime {
  return (IMAGE_MIMES as readonly string[]).includes(mime);
}

/** "PNG", "JPEG", "GIF", "WebP". */
export function formatName(mime: ImageMime): string {
  return FORMATS[mime].name;
}

/** The format name libvips reports for `mime` in an image's metadata. */
export function vipsFormat(mime: ImageMime): string {
  return FORMATS[mime].vips;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The type the bytes themselves are (by their magic number), or undefined for none of the four. */
export function sniffImage(bytes: Buffer): ImageMime | undefined {
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  const head = bytes.subarray(0, 6).toString("latin1");
  if (head === "GIF87a" || head === "GIF89a") return "image/gif";
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return undefined;
}

/** The first bytes as hex, for a note about bytes that are no image: "3c 73 76 67 20 78 6d 6c". */
export function leadingHex(bytes: Buffer): string {
  return [...bytes.subarray(0, 8)].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The length in bytes `text` decodes to, counting only base64 characters (Jupyter may wrap lines). */
export function base64DecodedLength(text: string): number {
  let chars = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x20) chars++;
  return Math.floor((chars * 3) / 4);
}

/** The bytes of strict base64 (whitespace allowed between groups), or undefined when `text` is not base64. */
export function decodeBase64(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, "");
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return undefined;
  return Buffer.from(compact, "base64");
}
