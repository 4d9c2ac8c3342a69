import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Temp dirs made by one test file, all removed by cleanup() (call it in afterEach or afterAll). */
export interface TempDirs {
  /** A new empty dir named `<prefix>XXXXXX` in the system temp dir. */
  make(prefix?: string): string;
  cleanup(): void;
}

/** Makes temp dirs named `<prefix>XXXXXX` (short prefixes keep Unix socket paths under their limit). */
export function tempDirs(prefix = "albedo-"): TempDirs {
  const made: string[] = [];
  return {
    make(own = prefix) {
      const dir = mkdtempSync(join(tmpdir(), own));
      made.push(dir);
      return dir;
    },
    cleanup() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
