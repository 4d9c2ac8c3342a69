/** The images domain: a cell's images checked by their bytes, bounded, scaled, and labelled (I-1). */
export { checkImage, scaleDown, type CheckedImage, type ImageCheck, type ImageRefusal, type RefusedImage } from "./check.js";
export { collectImages, type CollectedImages } from "./collect.js";
export { IMAGE_MIMES, SVG_MIME, type ImageMime } from "./formats.js";
export { imageLabel } from "./label.js";
export { MAX_IMAGE_BYTES, MAX_IMAGE_EDGE_PX, MAX_IMAGE_PIXELS, MAX_IMAGES_PER_EXECUTION } from "./limits.js";
