#!/usr/bin/env node
// Runs `albedo setup` once npm has installed and built the package. It always exits 0: the
// JavaScript install is usable without Python, and `albedo setup` can be rerun at any time.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Upper bound for the whole setup run (venv creation plus pip), in milliseconds. */
const POSTINSTALL_TIMEOUT_MS = 20 * 60 * 1000;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const say = (text) => process.stderr.write(`albedo: ${text}\n`);

if (process.env.ALBEDO_SKIP_SETUP === "1") {
  say("ALBEDO_SKIP_SETUP=1: skipping the Python setup; run `albedo setup` when you want kernels.");
  process.exit(0);
}
if (!existsSync(join(root, "dist", "src", "cli", "main.js"))) {
  say("the runtime is not built yet, so the Python setup was skipped; run `npm run build` and then `albedo setup`.");
  process.exit(0);
}
const result = spawnSync(process.execPath, [join(root, "bin", "albedo"), "setup"], { cwd: root, stdio: "inherit", timeout: POSTINSTALL_TIMEOUT_MS });
if (result.status !== 0) {
  const why = result.error ? ` (${result.error.message})` : "";
  say(`the Python environment for kernels is not ready${why}; the JavaScript part is installed.`);
  say("Fix the cause shown above and run `albedo setup`, or run `albedo doctor` to see what is missing.");
}
process.exit(0);
