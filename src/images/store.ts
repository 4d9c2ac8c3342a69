/**
 * Where the images people are shown live (I-3): one file per content in the state dir's
 * `images/` directory, named by its SHA-256 (so an image shown twice is stored once), mode 0600,
 * written whole or not at all. One ImageStore is one session's view of that directory: the ids it
 * kept, and the bytes they count against the session's quota. An id is 64 hex digits and nothing
 * else, so a request can never name a path.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, stat, unlink, utimes } from "node:fs/promises";
import { join } from "node:path";
import { humanSize } from "../json/index.js";
import { readFileBounded, writeFileAtomic } from "../platform/index.js";
import type { CheckedImage } from "./check.js";
import { isImageMime, type ImageMime } from "./formats.js";
import { MAX_IMAGE_BYTES } from "./limits.js";

/** The state dir's directory of shown images. */
export const IMAGES_DIR = "images";
/** Bytes of distinct images one session keeps; past it an image is shown as a label saying so, and not stored. */
export const MAX_SESSION_IMAGE_BYTES = 64 * 1024 * 1024;
/** Files of the images directory one prune looks at. */
export const MAX_PRUNED_IMAGE_FILES = 100_000;

/** What an id must look like: a SHA-256 in lower-case hex. */
const IMAGE_ID = /^[0-9a-f]{64}$/;

const EXTENSIONS: Readonly<Record<ImageMime, string>> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

/** A kept image as people and clients see it. */
export interface StoredImage {
  readonly id: string;
  readonly mime: ImageMime;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
  /** The file, absolute. */
  readonly path: string;
}

/** What a transcript row or an HTTP output says of a kept image: the store's record without its path (snake_case, as it goes to HTTP). */
export type ImageRef = {
  readonly id: string;
  readonly mime: ImageMime;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
};

/** The reference a row carries for `image`. */
export function imageRef(image: StoredImage): ImageRef {
  return { id: image.id, mime: image.mime, width: image.width, height: image.height, bytes: image.bytes };
}

export type KeptImage = { readonly ok: true; readonly image: StoredImage } | { readonly ok: false; readonly note: string };

/** Where the image `id` of `mime` is kept under `stateDir`; `id` must be an image id (isImageId). */
export function imageFile(stateDir: string, id: string, mime: ImageMime): string {
  return join(stateDir, IMAGES_DIR, `${id}.${EXTENSIONS[mime]}`);
}

/** Whether `id` is an image id (and so safe to join to a directory). */
export function isImageId(id: string): boolean {
  return IMAGE_ID.test(id);
}

export interface ImageStoreOptions {
  /** Bytes this session keeps; MAX_SESSION_IMAGE_BYTES unless set. */
  readonly quotaBytes?: number;
  /** Before its first write the store deletes files older than this (the receipts' retention); none when unset. */
  readonly retentionMs?: number;
}

export class ImageStore {
  private readonly kept = new Map<string, StoredImage>();
  private used = 0;
  private readonly dir: string;
  private readonly quotaBytes: number;
  /** The prune run before the first write, once. */
  private pruned: Promise<unknown> | undefined;

  constructor(
    /** The state dir. */
    private readonly stateDir: string,
    private readonly options: ImageStoreOptions = {},
  ) {
    this.dir = join(stateDir, IMAGES_DIR);
    this.quotaBytes = options.quotaBytes ?? MAX_SESSION_IMAGE_BYTES;
  }

  /** Stores `image` (once per content; a repeat only refreshes its time) unless the quota is used up. Throws the fs error of a failed write. */
  async keep(image: CheckedImage): Promise<KeptImage> {
    const known = this.kept.get(image.sha256);
    if (known !== undefined) return { ok: true, image: known };
    if (this.used + image.bytes.length > this.quotaBytes) {
      return { ok: false, note: `not kept: this session's images reached MAX_SESSION_IMAGE_BYTES (${humanSize(this.quotaBytes)})` };
    }
    const path = imageFile(this.stateDir, image.sha256, image.mime);
    const retention = this.options.retentionMs;
    if (retention !== undefined) await (this.pruned ??= pruneImages(this.stateDir, retention).catch(() => 0));
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const present = await stat(path).catch(() => undefined);
    if (present?.isFile() && present.size === image.bytes.length) {
      const now = new Date();
      await utimes(path, now, now);
    } else {
      await writeFileAtomic(path, image.bytes);
    }
    const stored: StoredImage = { id: image.sha256, mime: image.mime, width: image.width, height: image.height, bytes: image.bytes.length, path };
    this.kept.set(stored.id, stored);
    this.used += stored.bytes;
    return { ok: true, image: stored };
  }

  /**
   * Keeps each of `images` (one execution's, in order): the references of those kept, and a note
   * ("image 2 not kept: …") for each the quota refuses or the disk fails to take; `each` is every
   * image's reference in order, undefined for one not kept. Never throws.
   */
  async keepAll(images: readonly CheckedImage[]): Promise<{ refs: ImageRef[]; notes: string[]; each: (ImageRef | undefined)[] }> {
    const each: (ImageRef | undefined)[] = [];
    const notes: string[] = [];
    for (const [index, image] of images.entries()) {
      const kept = await this.keep(image).catch((error: unknown) => ({ ok: false as const, note: `not kept: ${error instanceof Error ? error.message : String(error)}` }));
      each.push(kept.ok ? imageRef(kept.image) : undefined);
      if (!kept.ok) notes.push(`image ${index + 1} ${kept.note}`);
    }
    return { refs: each.filter((ref) => ref !== undefined), notes, each };
  }

  /**
   * The bytes of the image `ref` names, read from the images directory whether or not this store
   * kept it (a saved conversation names images of its session's earlier stores); undefined when
   * its file is gone (the retention pruned it) or does not hold that image (its hash differs).
   */
  async read(ref: ImageRef): Promise<Buffer | undefined> {
    if (!isImageId(ref.id) || !isImageMime(ref.mime)) return undefined;
    // Bounded by the size the reference names: a file of another size is not that image.
    const found = await readFileBounded(imageFile(this.stateDir, ref.id, ref.mime), Math.min(ref.bytes, MAX_IMAGE_BYTES)).catch(() => undefined);
    if (found?.kind !== "file") return undefined;
    return createHash("sha256").update(found.bytes).digest("hex") === ref.id ? found.bytes : undefined;
  }

  /** The image this session kept under `id`; undefined for an id it did not keep, or one that is not an id. */
  find(id: string): StoredImage | undefined {
    return isImageId(id) ? this.kept.get(id) : undefined;
  }

  /** Bytes this session's images count against its quota. */
  get usedBytes(): number {
    return this.used;
  }
}

/** Deletes image files not stored or shown again for `maxAgeMs` (the receipts' retention); returns how many. */
export async function pruneImages(stateDir: string, maxAgeMs: number, now = Date.now()): Promise<number> {
  const dir = join(stateDir, IMAGES_DIR);
  const names = (await readdir(dir).catch(() => [] as string[])).slice(0, MAX_PRUNED_IMAGE_FILES);
  let removed = 0;
  for (const name of names) {
    const file = join(dir, name);
    const found = await stat(file).catch(() => undefined);
    if (found?.isFile() && now - found.mtimeMs > maxAgeMs) {
      await unlink(file).catch(() => undefined);
      removed += 1;
    }
  }
  return removed;
}
