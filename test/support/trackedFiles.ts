/**
 * Vitest global setup: no test rewrites a file git tracks. The teardown names every tracked file
 * written while the run lasted and fails the run; dist/, the venvs and temp dirs are not tracked.
 * The one file a test may write on request is the web console guide's screenshot, with
 * SCREENSHOT_ENV=1. Skipped outside a git checkout and in a nested run (its parent checks).
 */
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { SKIP_BUILD_ENV } from "./build.js";

/** Set to 1 to let test/web/console.test.ts retake docs/guide/web-console.png. */
export const SCREENSHOT_ENV = "ALBEDO_TEST_SCREENSHOT";
const ROOT = join(import.meta.dirname, "..", "..");
/** The guide's screenshot, relative to the checkout. */
export const SCREENSHOT_PATH = "docs/guide/web-console.png";
/** Bound on `git ls-files`. */
const GIT_TIMEOUT_MS = 30_000;
/** Most file names the failure lists. */
const MAX_NAMED_FILES = 20;

function trackedFiles(): string[] | undefined {
  const listed = spawnSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8", timeout: GIT_TIMEOUT_MS });
  if (listed.status !== 0) return undefined;
  return listed.stdout.split("\0").filter(Boolean);
}

/** Tracked files whose content changed at or after `sinceMs`. */
export function writtenSince(files: readonly string[], sinceMs: number): string[] {
  return files.filter((file) => {
    try {
      return statSync(join(ROOT, file)).mtimeMs >= sinceMs;
    } catch {
      return false; // removed: git status shows it; no test here removes tracked files
    }
  });
}

export default function setup(): (() => void) | undefined {
  if (process.env[SKIP_BUILD_ENV] === "1") return undefined;
  const files = trackedFiles();
  if (files === undefined) return undefined;
  const start = Date.now();
  return () => {
    const allowed = process.env[SCREENSHOT_ENV] === "1" ? [SCREENSHOT_PATH] : [];
    const written = writtenSince(files, start).filter((file) => !allowed.includes(file));
    if (written.length === 0) return;
    const named = written.slice(0, MAX_NAMED_FILES).join(", ") + (written.length > MAX_NAMED_FILES ? `, and ${written.length - MAX_NAMED_FILES} more` : "");
    // Vitest reports an error thrown here but exits 0 all the same: the exit code says it.
    process.stderr.write(`albedo tests: FAILED: tracked files were written during the test run (a test writes only under temp dirs or dist/; an edit of your own during the run shows here too): ${named}\n`);
    process.exitCode = 1;
  };
}
