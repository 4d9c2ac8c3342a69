/** The images domain: a cell's images checked by their bytes, bounded, scaled, and labelled (I-1). */
export { checkImage, droppedImage, mayBeImage, scaleDown, type CheckedImage, type ImageCheck } from "./check.js";
export { collectImages, keepImageBundle } from "./collect.js";
export { imageLabel } from "./label.js";
export { MAX_IMAGE_BYTES, MAX_IMAGE_EDGE_PX, MAX_IMAGE_PIXELS, MAX_IMAGES_PER_EXECUTION } from "./limits.js";
export { IMAGE_MIMES, isImageMime, SVG_MIME } from "./formats.js";
export { ImageStore, imageFile, pruneImages, IMAGES_DIR, MAX_SESSION_IMAGE_BYTES, type ImageRef } from "./store.js";
