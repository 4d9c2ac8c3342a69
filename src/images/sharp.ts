/**
 * sharp (libvips), loaded the first time an image is checked rather than when a module imports
 * it: loading libvips costs tens of milliseconds, and most commands never see an image. On load,
 * every libvips loader is blocked but the four this domain accepts, read from memory only; the
 * bytes have passed the magic-number check already, so this is a second wall: SVG, PDF, TIFF or a
 * loader that reads files never runs on a kernel's bytes, whatever libvips would sniff in them.
 */
import type SharpModule from "sharp";

export type Sharp = typeof SharpModule;

/** The libvips loaders left unblocked: PNG, JPEG, GIF and WebP from a buffer. */
const ALLOWED_LOADERS = ["VipsForeignLoadPngBuffer", "VipsForeignLoadJpegBuffer", "VipsForeignLoadNsgifBuffer", "VipsForeignLoadWebpBuffer"];

let loading: Promise<Sharp> | undefined;

/** The sharp module, configured; loads it on the first call. */
export function loadSharp(): Promise<Sharp> {
  loading ??= import("sharp").then(({ default: sharp }) => {
    // A daemon checks many different images once each: libvips' operation cache would only hold memory.
    sharp.cache(false);
    sharp.block({ operation: ["VipsForeignLoad"] });
    sharp.unblock({ operation: ALLOWED_LOADERS });
    return sharp;
  });
  return loading;
}
