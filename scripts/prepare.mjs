#!/usr/bin/env node
// npm's prepare script (npm install and npm link in the checkout): builds the runtime and the web
// console, then runs the Python setup (scripts/postinstall.mjs), saying what each step does and
// how long it took (see announce.mjs for where the lines go).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { say } from "./announce.mjs";

/** Upper bound for the build (tsc and vite), in milliseconds. */
const BUILD_TIMEOUT_MS = 10 * 60 * 1000;
/** Upper bound for the Python setup step; postinstall.mjs bounds its own run below this. */
const SETUP_STEP_TIMEOUT_MS = 21 * 60 * 1000;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
// npm gives its own entry point to the scripts it runs; outside npm, the npm on PATH.
const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ["npm", []];

let started = Date.now();
say("building the runtime (tsc) and the web console (vite); this takes a minute or so ...");
const build = spawnSync(npm[0], [...npm[1], "run", "build"], { cwd: root, stdio: ["ignore", "inherit", "inherit"], timeout: BUILD_TIMEOUT_MS });
if (build.status !== 0) {
  say(`the build failed (${build.error ? build.error.message : `exit ${build.status ?? build.signal}`}) after ${seconds(started)}; its errors are above`);
  process.exit(1);
}
say(`built in ${seconds(started)}`);

started = Date.now();
const setup = spawnSync(process.execPath, [join(root, "scripts", "postinstall.mjs")], { cwd: root, stdio: ["ignore", "inherit", "inherit"], timeout: SETUP_STEP_TIMEOUT_MS });
process.exit(setup.status ?? 1);
