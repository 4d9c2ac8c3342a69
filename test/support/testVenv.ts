/**
 * The Jupyter test venv: a venv apart from the managed .venv, with what the tests run real Python
 * peers from (a Jupyter Server, the official MCP SDK, nbclient, matplotlib). The global setup
 * (testVenvSetup.ts) makes it once and later runs reuse it; where it cannot be made (no package
 * index reachable) each group that needs it is skipped with one line saying so; under CI (CI=true,
 * or REQUIRE_TEST_VENV_ENV=1, as .ci/run sets) that is a failure instead, so CI never passes
 * without running them.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { installDir } from "../../src/platform/index.js";

/** The checkout (found by its package.json, so the compiled benchmarks resolve it as the tests do). */
export const ROOT = installDir();
/** Names the venv to use (made there when it lacks a package); default `.venv-jupyter` in the checkout. */
export const TEST_VENV_ENV = "ALBEDO_TEST_JUPYTER_VENV";
/** Set to 1 to make a venv that cannot be made a failure rather than a skip (CI=true does the same). */
export const REQUIRE_TEST_VENV_ENV = "ALBEDO_TEST_REQUIRE_JUPYTER_VENV";
export const TEST_VENV = resolve(ROOT, process.env[TEST_VENV_ENV] ?? ".venv-jupyter");
export const TEST_VENV_PYTHON = join(TEST_VENV, "bin", "python");
/** Written by the script into a venv that has every package; gone from one that lacks any. */
const READY_STAMP = join(TEST_VENV, "albedo-test-venv-ready");
/**
 * Whether the venv has every package: gate a group with `describe.skipIf(!HAVE_TEST_VENV)`. Read
 * from the stamp the global setup leaves, so no test file pays for importing the packages.
 */
export const HAVE_TEST_VENV = existsSync(READY_STAMP);
/** What a benchmark that needs the venv answers without it. */
export const NO_TEST_VENV = "no Jupyter test venv (.venv-jupyter): `npm test` makes it on its first run";
