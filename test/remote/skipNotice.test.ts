/** A developer without the Jupyter test venv is told, in one line, that the remote suites were skipped and how to run them. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SKIP_BUILD_ENV } from "../support/build.js";
import { installDir } from "../../src/platform/index.js";

const ROOT = installDir();
/** A nested vitest run of one skipped file: its setup and a skip, no server started. */
const NESTED_RUN_TIMEOUT_MS = 120_000;

function nestedRun(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--maxWorkers=1", "--reporter=dot", "test/remote/cli.test.ts"], { cwd: ROOT, env, timeout: NESTED_RUN_TIMEOUT_MS });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.on("error", reject);
    // eslint-disable-next-line no-control-regex
    child.on("close", (code) => resolve({ code, output: output.replace(/\u001b\[[0-9;]*m/g, "") }));
  });
}

// A nested run must not start another one.
describe.skipIf(process.env[SKIP_BUILD_ENV] === "1")("K-12 the remote suites without the Jupyter test venv", () => {
  it("are skipped with one line naming the reason and scripts/jupyter-test-venv.sh; nothing fails", { timeout: NESTED_RUN_TIMEOUT_MS }, async () => {
    const missing = join(ROOT, "no-such-venv");
    const { code, output } = await nestedRun({ ...process.env, CI: undefined, ALBEDO_TEST_JUPYTER_VENV: missing, [SKIP_BUILD_ENV]: "1", NO_COLOR: "1" });
    const line = `albedo tests: remote-kernel suites (test/remote) skipped: no jupyter-server in ${missing}. To run them: run scripts/jupyter-test-venv.sh`;
    expect(output.split(line).length - 1, output).toBe(1);
    expect(code, output).toBe(0);
    expect(output).toMatch(/skipped/);
  });
});
