/**
 * `npm test` on a fresh clone needs nothing run before it: the global setup makes the Jupyter test
 * venv the Python peers run from, once, saying so in one line; where pip reaches no package index,
 * each group that needs the venv is skipped with one line naming what is missing and how to get it,
 * and nothing fails; under CI that is a failure instead. Proven by nested vitest runs with the venv
 * pointed at a fresh temp dir and pip pointed at an address where nothing listens.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SKIP_BUILD_ENV } from "./support/build.js";
import { nestedVitest } from "./support/nestedRun.js";
import { tempDirs } from "./support/tempDirs.js";
import { HAVE_TEST_VENV, REQUIRE_TEST_VENV_ENV, TEST_VENV_ENV } from "./support/testVenv.js";
import { TEST_VENV_GROUPS } from "./support/testVenvSetup.js";

/** A nested run: the setup (a venv made, pip failing at once) and files whose tests all need the venv. */
const NESTED_RUN_TIMEOUT_MS = 240_000;
/** Files every test of which needs the venv: in a run without it they are all skipped, and start nothing. */
const GATED_FILES = ["test/remote/cli.test.ts", "test/sandbox/matplotlib.test.ts"];
const PROGRESS = "albedo tests: making the Jupyter test venv in ";

const temps = tempDirs("albedo-testvenv-");
afterAll(() => temps.cleanup());

/** pip with no configuration of this machine's, and an index where nothing listens: it fails at once, as with no network. */
function noIndex(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PIP_CONFIG_FILE: "/dev/null", PIP_INDEX_URL: "http://127.0.0.1:9/simple", PIP_RETRIES: "0", PIP_DEFAULT_TIMEOUT: "5" };
  for (const name of ["PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT"]) delete env[name];
  return env;
}

const vitest = (files: readonly string[], env: NodeJS.ProcessEnv) => nestedVitest(files, env, NESTED_RUN_TIMEOUT_MS);

const count = (text: string, part: string): number => text.split(part).length - 1;

// A nested run must not start another one.
describe.skipIf(process.env[SKIP_BUILD_ENV] === "1")("the Jupyter test venv on a fresh clone", () => {
  it.skipIf(!HAVE_TEST_VENV)("once made (this run's own setup made it, or found it), is reused by the next run without a word", { timeout: NESTED_RUN_TIMEOUT_MS }, async () => {
    const { code, output } = await vitest(["test/text/utf8.test.ts"], process.env);
    expect(code, output).toBe(0);
    expect(output).not.toContain(PROGRESS);
  });

  it("without a reachable index: one progress line, one skip line per group saying what is missing and how to get it, nothing fails", { timeout: NESTED_RUN_TIMEOUT_MS }, async () => {
    const venv = join(temps.make(), "venv");
    const { code, output } = await vitest(GATED_FILES, { ...noIndex(), CI: undefined, [REQUIRE_TEST_VENV_ENV]: undefined, [TEST_VENV_ENV]: venv });
    expect(count(output, `${PROGRESS}${venv} `), output).toBe(1);
    for (const group of TEST_VENV_GROUPS) {
      const line = `albedo tests: ${group.what} skipped: no ${group.needs}: the Jupyter test venv (${venv}) could not be made (`;
      expect(count(output, line), `${line}\n${output}`).toBe(1);
    }
    expect(output).toContain("To run them: let pip reach a package index and run the tests again");
    expect(output).not.toMatch(/\bfailed\b|ENOENT|Unhandled/i);
    expect(code, output).toBe(0);
    expect(output).toMatch(/Tests\s+(\d+ passed \| )?\d+ skipped/);
  });

  it(`fails the run instead under CI (CI=true, or ${REQUIRE_TEST_VENV_ENV}=1 as .ci/run sets)`, { timeout: NESTED_RUN_TIMEOUT_MS }, async () => {
    const venv = join(temps.make(), "venv");
    const { code, output } = await vitest(["test/text/utf8.test.ts"], { ...noIndex(), CI: "true", [TEST_VENV_ENV]: venv });
    expect(code).not.toBe(0);
    expect(output).toContain(`the Jupyter test venv (${venv}) could not be made, and CI=true or ${REQUIRE_TEST_VENV_ENV}=1 makes that a failure`);
  });
});
