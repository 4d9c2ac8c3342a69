import { humanSize } from "../json/index.js";
import type { CheckedImage } from "./check.js";
import { formatName, type ImageMime } from "./formats.js";

/** The one line an image is shown as where it cannot be drawn: `[image 1 · 640×480 PNG · 23.0 KB]`; `number` counts from 1. */
export function imageLabel(number: number, image: CheckedImage | { readonly mime: ImageMime; readonly width: number; readonly height: number; readonly bytes: number }): string {
  const size = typeof image.bytes === "number" ? image.bytes : image.bytes.length;
  return `[image ${number} · ${image.width}×${image.height} ${formatName(image.mime)} · ${humanSize(size)}]`;
}
