/** Images for the tests, made with sharp or written byte by byte (a bomb, a padded PNG). */
import { crc32, createDeflate } from "node:zlib";
import sharp from "sharp";

/** A plot-like picture: white with a few coloured curves, so it compresses like a real chart. */
function plotPixels(width: number, height: number): Buffer {
  const pixels = Buffer.alloc(width * height * 3, 255);
  for (let curve = 0; curve < 4; curve++) {
    for (let x = 0; x < width; x++) {
      const y = Math.round(height / 2 + (Math.sin(x / 50 + curve) * height) / 3);
      for (let dy = -1; dy <= 1; dy++) {
        const row = y + dy;
        if (row < 0 || row >= height) continue;
        pixels.fill(curve * 60, (row * width + x) * 3, (row * width + x) * 3 + 3);
      }
    }
  }
  return pixels;
}

/** An image of `width` × `height` in `format`. */
export function picture(width: number, height: number, format: "png" | "jpeg" | "gif" | "webp" = "png"): Promise<Buffer> {
  return sharp(plotPixels(width, height), { raw: { width, height, channels: 3 } }).toFormat(format).toBuffer();
}

/** An animated image of three frames. */
export async function animation(format: "gif" | "webp"): Promise<Buffer> {
  const frames = await Promise.all(["#c00", "#0c0", "#00c"].map((background) => sharp({ create: { width: 40, height: 30, channels: 3, background } }).png().toBuffer()));
  return sharp(frames, { join: { animated: true } }).toFormat(format).toBuffer();
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid 1-bit grayscale PNG of `width` × `height` black pixels, deflated row by row (never held whole). */
export async function blackPng(width: number, height: number): Promise<Buffer> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([1, 0, 0, 0, 0], 8);
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on("data", (data: Buffer) => out.push(data));
  const done = new Promise((resolve) => deflate.on("end", resolve));
  const row = Buffer.alloc(1 + Math.ceil(width / 8));
  for (let y = 0; y < height; y++) if (!deflate.write(row)) await new Promise((resolve) => deflate.once("drain", resolve));
  deflate.end();
  await done;
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", Buffer.concat(out)), chunk("IEND", Buffer.alloc(0))]);
}

/** `png` grown to exactly `size` bytes by a private ancillary chunk before IEND (decoders skip it). */
export function paddedPng(png: Buffer, size: number): Buffer {
  const iend = png.length - 12;
  const pad = size - png.length - 12;
  if (pad < 0) throw new Error(`the PNG is already ${png.length} bytes`);
  return Buffer.concat([png.subarray(0, iend), chunk("alBo", Buffer.alloc(pad, 7)), png.subarray(iend)]);
}

/** A display_data content with `bytes` as base64 under `mime`. */
export function bundle(mime: string, bytes: Buffer | string): { data: Record<string, string>; metadata: object } {
  return { data: { "text/plain": "<Figure>", [mime]: typeof bytes === "string" ? bytes : bytes.toString("base64") }, metadata: {} };
}
