/** Bounds on the images a cell's outputs carry (I-1). Each is tested at its edge in test/images. */

/** Images kept from one execution; the rest are dropped, each named in a note. */
export const MAX_IMAGES_PER_EXECUTION = 4;
/** Bytes of one image as a file (after base64 decoding), before and after scaling. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/**
 * Long edge of a kept image, in pixels; a larger one is scaled down. 1568 is the long edge
 * Anthropic's models are scaled to themselves, and above OpenAI's 768-pixel short edge for a
 * landscape image, so nothing a model can use is thrown away while a 4K plot costs a quarter of
 * the bytes and no server-side resize.
 */
export const MAX_IMAGE_EDGE_PX = 1568;
/**
 * Pixels (width × height, from the header) an image may declare before anything decodes it: the
 * guard against a decompression bomb, a PNG of a few kilobytes that claims 30,000 × 30,000. 50
 * megapixels is past any camera photo or plot a cell makes (an 8K frame is 33 megapixels).
 */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** Characters of a decoder's own message quoted in a note: it may quote the image's bytes, so it is cut to one short line. */
export const MAX_DECODER_MESSAGE_CHARS = 160;
