#!/usr/bin/env node
// Runs `albedo setup` once npm has installed and built the package (scripts/prepare.mjs). It always
// exits 0: the JavaScript install is usable without Python, and `albedo setup` can be rerun at any
// time. Setup's lines (one per phase, pip's steps under it) are passed on as they come, also to the
// terminal npm hides them from (announce.mjs).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { say, show } from "./announce.mjs";

/** Upper bound for the whole setup run (venv creation plus pip), in milliseconds. */
const POSTINSTALL_TIMEOUT_MS = 20 * 60 * 1000;
/** Time setup gets between SIGTERM and SIGKILL once POSTINSTALL_TIMEOUT_MS passed. */
const POSTINSTALL_KILL_GRACE_MS = 5_000;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

if (process.env.ALBEDO_SKIP_SETUP === "1") {
  say("ALBEDO_SKIP_SETUP=1: skipping the Python setup; run `albedo setup` when you want kernels.");
  process.exit(0);
}
if (!existsSync(join(root, "dist", "src", "cli", "main.js"))) {
  say("the runtime is not built yet, so the Python setup was skipped; run `npm run build` and then `albedo setup`.");
  process.exit(0);
}
say("preparing the Python environment kernels run in (albedo setup: a venv with ipykernel; pip may take a few minutes; ALBEDO_SKIP_SETUP=1 skips it) ...");
const started = Date.now();
const child = spawn(process.execPath, [join(root, "bin", "albedo"), "setup"], { cwd: root, stdio: ["ignore", "inherit", "pipe"] });
child.stderr.on("data", (chunk) => show(chunk.toString("utf8")));
let timedOut = false;
const deadline = setTimeout(() => {
  timedOut = true;
  child.kill("SIGTERM");
  setTimeout(() => child.kill("SIGKILL"), POSTINSTALL_KILL_GRACE_MS).unref();
}, POSTINSTALL_TIMEOUT_MS);
child.on("error", (error) => say(`could not start albedo setup: ${error.message}`));
child.on("close", (code) => {
  clearTimeout(deadline);
  if (code === 0) {
    say(`the Python environment is ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } else {
    const why = timedOut ? ` (albedo setup did not finish within POSTINSTALL_TIMEOUT_MS=${POSTINSTALL_TIMEOUT_MS} ms)` : "";
    say(`the Python environment for kernels is not ready${why}; the JavaScript part is installed.`);
    say("Fix the cause shown above and run `albedo setup`, or run `albedo doctor` to see what is missing.");
  }
  process.exit(0);
});
