/**
 * Vitest global setup for the Jupyter test venv (test/support/testVenv.ts): made once, with
 * scripts/jupyter-test-venv.sh and one progress line, reused after; where it cannot be made, one
 * skip line per group that needs it, or a failure under CI.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { skipLine } from "./skips.js";
import { REQUIRE_TEST_VENV_ENV, ROOT, TEST_VENV, TEST_VENV_ENV } from "./testVenv.js";

const SCRIPT = join(ROOT, "scripts", "jupyter-test-venv.sh");
/** Bound on making the venv: pip fetches and installs jupyter-server, matplotlib and their dependencies. */
const MAKE_TIMEOUT_MS = 15 * 60_000;
/** Bound on checking an existing venv (the stamp, else one Python importing the packages). */
const CHECK_TIMEOUT_MS = 60_000;
/** Most characters of pip's error a skip line quotes. */
const MAX_REASON_CHARS = 240;

/** The groups that run nothing without the venv, one skip line each. */
export const TEST_VENV_GROUPS = [
  { what: "remote-kernel suites (test/remote)", needs: "jupyter-server" },
  { what: "notebook relay suite (test/notebook/relay.test.ts)", needs: "nbclient or jupyter_client" },
  { what: "MCP tests with the official Python SDK (test/session/mcp, test/mcpServer/serve, test/mcpServer/http)", needs: "mcp package (the official MCP SDK)" },
  { what: "matplotlib tests (test/sandbox/matplotlib, test/cli/images, test/turns/images)", needs: "matplotlib" },
] as const;

/** Whether a venv that cannot be had must fail the run. */
export function testVenvRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === "true" || env[REQUIRE_TEST_VENV_ENV] === "1";
}

function runScript(args: readonly string[], timeoutMs: number): { ok: boolean; output: string } {
  const run = spawnSync("bash", [SCRIPT, TEST_VENV, ...args], { cwd: ROOT, encoding: "utf8", timeout: timeoutMs });
  const output = `${run.stdout ?? ""}${run.stderr ?? ""}${run.error ? `${run.error.message}\n` : ""}`;
  return { ok: run.status === 0, output };
}

/** pip's last error line (or the output's last line): why the venv could not be made. */
function whyNot(output: string): string {
  const lines = output.split("\n").map((line) => line.trim()).filter(Boolean);
  const line = [...lines].reverse().find((l) => l.startsWith("ERROR:")) ?? lines.at(-1) ?? "the script said nothing";
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS)}…` : line;
}

/** Jupyter Enterprise Gateway is not among the venv's packages (nor on every index): its one test runs where someone installed it. */
function enterpriseGatewayLine(shown: string): void {
  if (existsSync(join(TEST_VENV, "bin", "jupyter-enterprisegateway"))) return;
  process.stderr.write(`${skipLine({
    what: "Enterprise Gateway suite (test/remote/gateway.test.ts)",
    reason: `no jupyter-enterprisegateway in ${shown}`,
    enable: `install it there (${join(shown, "bin", "pip")} install jupyter_enterprise_gateway)`,
  })}\n`);
}

/** Vitest global setup: makes the venv when it lacks a package; says which groups are skipped when it cannot. */
export default function setup(): void {
  const shown = relative(ROOT, TEST_VENV).startsWith("..") ? TEST_VENV : relative(ROOT, TEST_VENV);
  if (runScript(["--check"], CHECK_TIMEOUT_MS).ok) return enterpriseGatewayLine(shown);
  process.stderr.write(`albedo tests: making the Jupyter test venv in ${shown} (pip installs jupyter-server, ipykernel, mcp, matplotlib, nbclient); once, later runs reuse it…\n`);
  const made = runScript([], MAKE_TIMEOUT_MS);
  if (made.ok) return enterpriseGatewayLine(shown);
  const reason = whyNot(made.output);
  if (testVenvRequired()) {
    throw new Error(`the Jupyter test venv (${TEST_VENV}) could not be made, and CI=true or ${REQUIRE_TEST_VENV_ENV}=1 makes that a failure:\n${made.output}`);
  }
  for (const group of TEST_VENV_GROUPS) {
    process.stderr.write(`${skipLine({
      what: group.what,
      reason: `no ${group.needs}: the Jupyter test venv (${shown}) could not be made (${reason})`,
      enable: `let pip reach a package index and run the tests again, or point ${TEST_VENV_ENV} at a venv with jupyter-server, ipykernel, mcp, matplotlib and nbclient`,
    })}\n`);
  }
}
