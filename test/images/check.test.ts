import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { checkImage, imageLabel, MAX_IMAGE_BYTES, MAX_IMAGE_EDGE_PX, MAX_IMAGE_PIXELS, scaleDown, type CheckedImage, type ImageCheck } from "../../src/images/index.js";
import { decoderMessage } from "../../src/images/check.js";
import { MAX_DECODER_MESSAGE_CHARS } from "../../src/images/limits.js";
import { animation, blackPng, paddedPng, picture } from "./fixtures.js";

function kept(check: ImageCheck): CheckedImage {
  if (!check.ok) throw new Error(`refused: ${check.note}`);
  return check.image;
}

describe("I-1 an image is judged by its bytes", () => {
  it("keeps a PNG, JPEG, GIF and WebP with the size their header declares and the hash of their bytes", async () => {
    for (const [mime, format] of [["image/png", "png"], ["image/jpeg", "jpeg"], ["image/gif", "gif"], ["image/webp", "webp"]] as const) {
      const bytes = await picture(320, 200, format);
      const image = kept(await checkImage(mime, bytes.toString("base64")));
      expect(image).toMatchObject({ mime, width: 320, height: 200 });
      expect(image.bytes.equals(bytes)).toBe(true);
      expect(image.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(kept(await checkImage(mime, bytes)).sha256).toBe(image.sha256);
    }
  });

  it("accepts base64 wrapped over lines, as some kernels send it", async () => {
    const text = (await picture(64, 48)).toString("base64").replace(/.{76}/g, "$&\n");
    expect(kept(await checkImage("image/png", text)).width).toBe(64);
  });

  it("labels an image in one line: number, size, format, bytes", async () => {
    const image = kept(await checkImage("image/png", await picture(640, 480)));
    expect(imageLabel(1, image)).toMatch(/^\[image 1 · 640×480 PNG · \d+\.\d KB\]$/);
    expect(imageLabel(2, { ...image, mime: "image/webp", bytes: Buffer.alloc(512) })).toBe("[image 2 · 640×480 WebP · 512 B]");
  });

  it("keeps only the first frame of an animation, as a PNG (the frame that was decoded)", async () => {
    for (const [mime, format] of [["image/gif", "gif"], ["image/webp", "webp"]] as const) {
      const image = kept(await checkImage(mime, await animation(format)));
      expect(image).toMatchObject({ mime: "image/png", width: 40, height: 30 });
      expect((await sharp(image.bytes).metadata()).pages ?? 1).toBe(1);
    }
  });
});

describe("I-1 B a bad image is a note, never a throw", () => {
  it("refuses a PNG with a bad signature", async () => {
    const png = await picture(32, 32);
    png[1] = 0x51;
    expect(await checkImage("image/png", png)).toEqual({ ok: false, reason: "bad_magic", note: "bad magic bytes: claimed image/png but the bytes are no image format (they start 89 51 4e 47 0d 0a 1a 0a)" });
  });

  it("refuses a truncated PNG or JPEG: its header reads, its pixels do not", async () => {
    for (const [mime, format] of [["image/png", "png"], ["image/jpeg", "jpeg"]] as const) {
      const bytes = await picture(400, 300, format);
      const check = await checkImage(mime, bytes.subarray(0, Math.floor(bytes.length / 2)));
      expect(check, mime).toMatchObject({ ok: false, reason: "undecodable" });
      expect(!check.ok && check.note).toMatch(/^does not decode \(truncated or corrupt\): /);
    }
  });

  it("quotes a decoder's message on one line of at most MAX_DECODER_MESSAGE_CHARS", () => {
    const atBound = "x".repeat(MAX_DECODER_MESSAGE_CHARS);
    expect(decoderMessage(new Error(atBound))).toBe(atBound);
    expect(decoderMessage(new Error(`${atBound}y`))).toBe(atBound);
    expect(decoderMessage(new Error("VipsJpeg: bad\n\u001b[31mred\u0000"))).toBe("VipsJpeg: bad [31mred");
  });

  it("refuses a JPEG claimed as PNG, and a PNG claimed as JPEG", async () => {
    expect(await checkImage("image/png", await picture(32, 32, "jpeg"))).toMatchObject({ ok: false, reason: "bad_magic", note: "bad magic bytes: claimed image/png but the bytes are a JPEG" });
    expect(await checkImage("image/jpeg", await picture(32, 32))).toMatchObject({ ok: false, reason: "bad_magic", note: "bad magic bytes: claimed image/jpeg but the bytes are a PNG" });
  });

  it("refuses base64 that is not base64", async () => {
    for (const text of ["not base64!", "iVBORw0KGgo", "iVBO\u0000Rw0K", "====", "%%%%"]) {
      expect(await checkImage("image/png", text)).toEqual({ ok: false, reason: "not_base64", note: "the PNG data is not base64" });
    }
    expect(await checkImage("image/png", "")).toMatchObject({ ok: false, reason: "bad_magic" });
  });

  it("refuses SVG and types it does not keep", async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="file:///etc/passwd"/></svg>');
    expect(await checkImage("image/svg+xml", svg.toString("base64"))).toMatchObject({ ok: false, reason: "unsupported", note: expect.stringMatching(/^SVG is not kept as an image/) });
    expect(await checkImage("image/png", svg)).toMatchObject({ ok: false, reason: "bad_magic" });
    expect(await checkImage("image/tiff", await picture(8, 8))).toMatchObject({ ok: false, reason: "unsupported", note: "image/tiff is not an image type albedo keeps (PNG, JPEG, GIF, WebP)" });
  });

  it("refuses garbage behind a valid signature, for every type", async () => {
    const signatures: Record<string, Buffer> = {
      "image/png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      "image/jpeg": Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
      "image/gif": Buffer.from("GIF89a", "latin1"),
      "image/webp": Buffer.from("RIFF\u0000\u0001\u0000\u0000WEBPVP8 ", "latin1"),
    };
    for (const [mime, head] of Object.entries(signatures)) {
      for (const seed of [1, 2, 3]) {
        const tail = Buffer.from(Array.from({ length: 200 }, (_, i) => (i * 131 + seed * 17) % 256));
        const check = await checkImage(mime, Buffer.concat([head, tail]));
        expect(check, mime).toMatchObject({ ok: false, reason: "undecodable" });
      }
    }
  });
});

describe("I-1 B the bounds of one image, at their edges", () => {
  it("refuses a 30,000 × 30,000 decompression bomb from its header, before decoding it", async () => {
    const bomb = await blackPng(30_000, 30_000);
    expect(bomb.length).toBeLessThan(200 * 1024);
    const check = await checkImage("image/png", bomb.toString("base64"));
    expect(check).toMatchObject({ ok: false, reason: "bomb" });
    expect(!check.ok && check.note).toMatch(/^a decompression bomb: the header declares 30000×30000 \(900\.0 megapixels\) in \d+\.\d KB; MAX_IMAGE_PIXELS is 50\.0 megapixels$/);
  });

  it("keeps MAX_IMAGE_PIXELS pixels and refuses one row more", async () => {
    const width = 10_000;
    const rows = MAX_IMAGE_PIXELS / width;
    expect(kept(await checkImage("image/png", await blackPng(width, rows)))).toMatchObject({ width, height: rows });
    expect(await checkImage("image/png", await blackPng(width, rows + 1))).toMatchObject({ ok: false, reason: "bomb" });
  });

  it("keeps an image of MAX_IMAGE_BYTES and refuses one byte more, as base64 or bytes", async () => {
    const small = await picture(16, 16);
    const atBound = paddedPng(small, MAX_IMAGE_BYTES);
    expect(kept(await checkImage("image/png", atBound.toString("base64"))).bytes.length).toBe(MAX_IMAGE_BYTES);
    const over = paddedPng(small, MAX_IMAGE_BYTES + 1);
    for (const data of [over, over.toString("base64")]) {
      expect(await checkImage("image/png", data)).toEqual({ ok: false, reason: "too_large", note: "5.0 MB is over MAX_IMAGE_BYTES (5.0 MB)" });
    }
  });

  it("leaves an image of MAX_IMAGE_EDGE_PX alone and scales one pixel more down, keeping its type (GIF becomes PNG)", async () => {
    const edge = kept(await checkImage("image/png", await picture(MAX_IMAGE_EDGE_PX, 900)));
    expect(kept(await scaleDown(edge))).toBe(edge);
    for (const [mime, format, out] of [["image/png", "png", "image/png"], ["image/jpeg", "jpeg", "image/jpeg"], ["image/webp", "webp", "image/webp"], ["image/gif", "gif", "image/png"]] as const) {
      const big = kept(await checkImage(mime, await picture(MAX_IMAGE_EDGE_PX + 1, 900, format)));
      const scaled = kept(await scaleDown(big));
      expect(scaled, mime).toMatchObject({ mime: out, width: MAX_IMAGE_EDGE_PX, height: 899 });
      expect(kept(await checkImage(out, scaled.bytes))).toMatchObject({ width: MAX_IMAGE_EDGE_PX, height: 899, sha256: scaled.sha256 });
    }
    const tall = kept(await scaleDown(kept(await checkImage("image/png", await picture(300, 4000))), 1000));
    expect([tall.width, tall.height]).toEqual([75, 1000]);
  });
});
