import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Set to 1 by a test that starts a nested run: dist/ is built already, and rebuilding it under running tests would race them. */
export const SKIP_BUILD_ENV = "ALBEDO_TEST_SKIP_BUILD";
/** How long the one build before the suite may take. */
const BUILD_TIMEOUT_MS = 180_000;

/**
 * Vitest global setup: compiles dist/ once, because tests that spawn `bin/albedo` run the
 * compiled CLI, and builds the web console into dist/web, which the daemon serves. A type error fails the whole run here, with tsc's own message.
 */
export default function setup(): void {
  const repo = join(import.meta.dirname, "..", "..");
  // A run started by another test (the fresh-machine check) uses the dist/ its parent run built.
  if (process.env[SKIP_BUILD_ENV] === "1" && existsSync(join(repo, "dist", "src", "cli", "main.js"))) return;
  const result = spawnSync(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", repo], { encoding: "utf8", timeout: BUILD_TIMEOUT_MS });
  if (result.status !== 0) throw new Error(`build before tests failed:\n${result.stdout}${result.stderr}`);
  if (!existsSync(join(repo, "dist", "src", "cli", "main.js"))) throw new Error("build did not produce dist/src/cli/main.js");
  // The web console the daemon serves, as `npm install` builds it.
  const web = spawnSync(process.execPath, [join(repo, "node_modules", "vite", "bin", "vite.js"), "build", "--config", join(repo, "web", "vite.config.ts")], { cwd: repo, encoding: "utf8", timeout: BUILD_TIMEOUT_MS });
  if (web.status !== 0) throw new Error(`web console build before tests failed:\n${web.stdout}${web.stderr}`);
}
