/** Small builders for hostile skill trees in temp dirs; nothing here is checked in. */
import { execFileSync } from "node:child_process";
import { closeSync, ftruncateSync, mkdirSync, openSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/tempDirs.js";

/** Liveness bound for one discovery or listing over a hostile tree: far above normal, far below "hung". */
export const LIVENESS_MS = 30_000;

/** A workspace, home and (empty) install dir under one temp base, so built-in skills stay out. */
export interface Layout {
  readonly base: string;
  readonly workspace: string;
  readonly home: string;
  readonly install: string;
  /** `<workspace>/.agents/skills`, created. */
  readonly root: string;
  remove(): void;
}

export function makeLayout(): Layout {
  const { dir: base, remove } = tempDir("alb-hostile-");
  const workspace = join(base, "ws");
  const home = join(base, "home");
  const install = join(base, "install");
  const root = join(workspace, ".agents", "skills");
  for (const dir of [home, install, root]) mkdirSync(dir, { recursive: true });
  return { base, workspace, home, install, root, remove };
}

/** Makes `<root>/<dirName>/` and returns the path its SKILL.md would have. */
export function skillFilePath(root: string, dirName: string): string {
  const dir = join(root, dirName);
  mkdirSync(dir, { recursive: true });
  return join(dir, "SKILL.md");
}

/** A FIFO at `path` (nothing ever writes to it: opening it for reading would block). */
export function makeFifo(path: string): void {
  execFileSync("mkfifo", [path]);
}

/** A sparse file of `bytes` bytes: its size is real, its blocks are not allocated. */
export function sparseFile(path: string, bytes: number): void {
  const fd = openSync(path, "w");
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

/** `count` links `<dir>/<prefix>0 -> <prefix>1 -> ... -> target`; returns the first link's path. */
export function linkChain(dir: string, prefix: string, count: number, target: string): string {
  for (let i = count - 1; i >= 0; i--) symlinkSync(i === count - 1 ? target : `${prefix}${i + 1}`, join(dir, `${prefix}${i}`));
  return join(dir, `${prefix}0`);
}

/** Deterministic pseudo-random bytes (a fixed linear congruential sequence), for binary junk. */
export function junkBytes(length: number, seed = 7): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

/** A "billion laughs" frontmatter block: `levels` anchors, each aliasing the previous ten times. */
export function billionLaughs(levels = 9): string {
  const lines = [`lol0: &lol0 "lol"`];
  for (let i = 1; i <= levels; i++) lines.push(`lol${i}: &lol${i} [${Array.from({ length: 10 }, () => `*lol${i - 1}`).join(", ")}]`);
  return lines.join("\n");
}
