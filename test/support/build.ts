import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** How long the one build before the suite may take. */
const BUILD_TIMEOUT_MS = 180_000;

/**
 * Vitest global setup: compiles dist/ once, because tests that spawn `bin/albedo` run the
 * compiled CLI. A type error fails the whole run here, with tsc's own message.
 */
export default function setup(): void {
  const repo = join(import.meta.dirname, "..", "..");
  const result = spawnSync(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", repo], { encoding: "utf8", timeout: BUILD_TIMEOUT_MS });
  if (result.status !== 0) throw new Error(`build before tests failed:\n${result.stdout}${result.stderr}`);
  if (!existsSync(join(repo, "dist", "src", "cli", "main.js"))) throw new Error("build did not produce dist/src/cli/main.js");
}
