import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Temp dirs made by one test file, all removed by cleanup() (call it in afterEach or afterAll). */
export interface TempDirs {
  /** A new empty dir named `<prefix>XXXXXX` in the system temp dir. */
  make(prefix?: string): string;
  cleanup(): void;
}

/**
 * Makes temp dirs named `<prefix>XXXXXX` in `parent` (short prefixes keep Unix socket paths under
 * their limit; another parent, such as /var/tmp, for a dir a sandbox's private /tmp must not hide).
 */
export function tempDirs(prefix = "albedo-", parent = tmpdir()): TempDirs {
  const made: string[] = [];
  return {
    make(own = prefix) {
      const dir = mkdtempSync(join(parent, own));
      made.push(dir);
      return dir;
    },
    cleanup() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One temp dir with its own remover, for a fixture that owns its dir (a layout, a run dir, a server's root). */
export interface TempDir {
  readonly dir: string;
  remove(): void;
}

/** Makes one dir named `<prefix>XXXXXX` in `parent`; `remove()` deletes it and everything under it. */
export function tempDir(prefix = "albedo-", parent = tmpdir()): TempDir {
  const dirs = tempDirs(prefix, parent);
  return { dir: dirs.make(), remove: () => dirs.cleanup() };
}
