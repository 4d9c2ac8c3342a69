/**
 * A nested vitest run for tests of the test setup itself (a machine without bubblewrap, without the
 * Jupyter test venv): the given files in one worker, the dot reporter, colour off; the parent's
 * dist/ is used as built (SKIP_BUILD_ENV). Its output is stdout and stderr together.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { SKIP_BUILD_ENV } from "./build.js";

const ROOT = join(import.meta.dirname, "..", "..");

export function nestedVitest(files: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  const nested: NodeJS.ProcessEnv = { ...env, [SKIP_BUILD_ENV]: "1", NO_COLOR: "1" };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--maxWorkers=1", "--reporter=dot", ...files], { cwd: ROOT, env: nested, timeout: timeoutMs });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.on("error", reject);
    // eslint-disable-next-line no-control-regex
    child.on("close", (code) => resolve({ code, output: output.replace(/\u001b\[[0-9;]*m/g, "") }));
  });
}
