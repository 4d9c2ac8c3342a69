import { describe, expect, it } from "vitest";
import { collectImages, MAX_IMAGE_EDGE_PX, MAX_IMAGES_PER_EXECUTION } from "../../src/images/index.js";
import { bundle, picture } from "./fixtures.js";

const stream = { name: "stdout", text: "plotted\n" };

describe("I-1 the images of one execution", () => {
  it("keeps the images of display_data and execute_result bundles, in order, and ignores outputs without one", async () => {
    const first = await picture(64, 48);
    const second = await picture(80, 60, "jpeg");
    const { images, notes } = await collectImages([stream, bundle("image/png", first), { data: { "text/plain": "42" } }, bundle("image/jpeg", second), null, "text", { data: [] }]);
    expect(notes).toEqual([]);
    expect(images.map((image) => [image.mime, image.width, image.height])).toEqual([["image/png", 64, 48], ["image/jpeg", 80, 60]]);
    expect(images[0]?.bytes.equals(first)).toBe(true);
  });

  it("takes one image per bundle: its raster representation before its SVG", async () => {
    const png = (await picture(32, 32)).toString("base64");
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"/>';
    const { images, notes } = await collectImages([{ data: { "image/svg+xml": svg, "image/png": png } }]);
    expect(notes).toEqual([]);
    expect(images.map((image) => image.mime)).toEqual(["image/png"]);
  });

  it("scales an image over MAX_IMAGE_EDGE_PX down to it, keeping its type", async () => {
    const { images } = await collectImages([bundle("image/png", await picture(3000, 2000))]);
    expect(images[0]).toMatchObject({ mime: "image/png", width: MAX_IMAGE_EDGE_PX, height: Math.round((2000 * MAX_IMAGE_EDGE_PX) / 3000) });
  });
});

describe("I-1 B what an execution drops is named in a note", () => {
  it("keeps MAX_IMAGES_PER_EXECUTION images with no note, and names the one more", async () => {
    const png = await picture(16, 16);
    const atBound = await collectImages(Array.from({ length: MAX_IMAGES_PER_EXECUTION }, () => bundle("image/png", png)));
    expect(atBound).toMatchObject({ notes: [] });
    expect(atBound.images).toHaveLength(MAX_IMAGES_PER_EXECUTION);
    const over = await collectImages(Array.from({ length: MAX_IMAGES_PER_EXECUTION + 1 }, () => bundle("image/png", png)));
    expect(over.images).toHaveLength(MAX_IMAGES_PER_EXECUTION);
    expect(over.notes).toEqual(["image 5 of 5 dropped: MAX_IMAGES_PER_EXECUTION is 4"]);
  });

  it("keeps 4 of 100 images in one cell and names the other 96 in one note", async () => {
    const png = await picture(16, 16);
    const { images, notes } = await collectImages(Array.from({ length: 100 }, () => bundle("image/png", png)));
    expect(images).toHaveLength(4);
    expect(notes).toEqual(["images 5–100 of 100 dropped: MAX_IMAGES_PER_EXECUTION is 4"]);
  });

  it("names each bad image with why, keeps the good ones around it, and judges only the first MAX_IMAGES_PER_EXECUTION offered", async () => {
    const outputs = [
      bundle("image/png", await picture(16, 16, "jpeg")),
      bundle("image/png", await picture(20, 10)),
      bundle("image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg"/>'),
      { data: { "image/webp": 12 } },
      bundle("image/gif", "not base64!"),
      bundle("image/png", await picture(10, 20)),
    ];
    const { images, notes } = await collectImages(outputs);
    expect(images.map((image) => [image.width, image.height])).toEqual([[20, 10]]);
    expect(notes).toEqual([
      "image 1 of 6 dropped: bad magic bytes: claimed image/png but the bytes are a JPEG",
      expect.stringMatching(/^image 3 of 6 dropped: SVG is not kept as an image/),
      "image 4 of 6 dropped: the image/webp data is not a string",
      "images 5–6 of 6 dropped: MAX_IMAGES_PER_EXECUTION is 4",
    ]);
    const garbled = await collectImages([bundle("image/gif", "not base64!"), bundle("image/png", await picture(8, 8))]);
    expect(garbled.notes).toEqual(["image 1 of 2 dropped: the GIF data is not base64"]);
    expect(garbled.images).toHaveLength(1);
  });
});
