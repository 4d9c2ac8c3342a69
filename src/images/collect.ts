/**
 * The images of one execution (I-1): from its outputs' display bundles, at most
 * MAX_IMAGES_PER_EXECUTION images, each checked and scaled to MAX_IMAGE_EDGE_PX; every image not
 * kept is named in a note. Only the first MAX_IMAGES_PER_EXECUTION images offered are judged (a bad
 * one is not replaced by a later one), so a cell of a thousand broken images costs four checks.
 * One bundle is one image: the first raster representation it holds, in IMAGE_MIMES order.
 */
import { type CheckedImage, prepareImage } from "./check.js";
import { IMAGE_MIMES, SVG_MIME } from "./formats.js";
import { MAX_IMAGE_EDGE_PX, MAX_IMAGES_PER_EXECUTION } from "./limits.js";

export interface CollectedImages {
  readonly images: readonly CheckedImage[];
  /** One line per image not kept, in output order: "image 5 of 9 dropped: MAX_IMAGES_PER_EXECUTION is 4". */
  readonly notes: readonly string[];
}

interface Offered {
  readonly mime: string;
  readonly data: unknown;
}

/** The images of `outputs` (Jupyter output contents; those with a `data` bundle are read), checked, scaled and bounded; never throws for bad input. */
export async function collectImages(outputs: readonly unknown[]): Promise<CollectedImages> {
  const offered = outputs.map(offeredImage).filter((item) => item !== undefined);
  const images: CheckedImage[] = [];
  const notes: string[] = [];
  const of = offered.length;
  for (const [index, item] of offered.slice(0, MAX_IMAGES_PER_EXECUTION).entries()) {
    const checked = typeof item.data === "string" ? await prepareImage(item.mime, item.data, MAX_IMAGE_EDGE_PX) : undefined;
    if (checked?.ok) images.push(checked.image);
    else notes.push(`image ${index + 1} of ${of} dropped: ${checked?.note ?? `the ${item.mime} data is not a string`}`);
  }
  if (of > MAX_IMAGES_PER_EXECUTION) notes.push(`${numbered(MAX_IMAGES_PER_EXECUTION + 1, of)} dropped: MAX_IMAGES_PER_EXECUTION is ${MAX_IMAGES_PER_EXECUTION}`);
  return { images, notes };
}

/** "image 5 of 9", or "images 5–9 of 9" for the run of the rest from `first`. */
function numbered(first: number, of: number): string {
  return first === of ? `image ${first} of ${of}` : `images ${first}–${of} of ${of}`;
}

/** The image representation a display bundle offers (a raster one first, else SVG), or undefined when it offers none. */
function offeredImage(output: unknown): Offered | undefined {
  if (typeof output !== "object" || output === null) return undefined;
  const data = (output as { data?: unknown }).data;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const bundle = data as Record<string, unknown>;
  const mime = [...IMAGE_MIMES, SVG_MIME].find((candidate) => Object.hasOwn(bundle, candidate));
  return mime === undefined ? undefined : { mime, data: bundle[mime] };
}

/**
 * Adds a display bundle that holds an image to `bundles` for collectImages (true), the first
 * MAX_IMAGES_PER_EXECUTION whole, later ones reduced to their kinds (collectImages only counts
 * those), so a cell that shows a thousand plots holds four while it runs; false when `data` holds
 * no image (its text is then the output's own).
 */
export function keepImageBundle(bundles: unknown[], data: unknown): boolean {
  if (typeof data !== "object" || data === null) return false;
  const mimes = Object.keys(data).filter((mime) => mime.startsWith("image/"));
  if (mimes.length === 0) return false;
  bundles.push({ data: bundles.length < MAX_IMAGES_PER_EXECUTION ? data : Object.fromEntries(mimes.map((mime) => [mime, ""])) });
  return true;
}
