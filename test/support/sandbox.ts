/**
 * Whether this machine can run the sandbox suites, decided once per process. Without bubblewrap
 * they are skipped, and the global setup says so in one line; with REQUIRE_SANDBOX_ENV set (CI's
 * .ci/run does) a missing sandbox fails the whole run instead, so CI still proves the sandbox.
 */
import { detectSandbox } from "../../src/sandbox/index.js";

/** Set to 1 to make an unusable sandbox a failure rather than a skip. */
export const REQUIRE_SANDBOX_ENV = "ALBEDO_TEST_REQUIRE_SANDBOX";

let verdict: { usable: boolean; reason: string } | undefined;

/** Whether bubblewrap can make a sandbox here, and why not when it cannot. */
export function sandboxVerdict(): { usable: boolean; reason: string } {
  if (verdict === undefined) {
    const found = detectSandbox(process.env);
    verdict = found.usable ? { usable: true, reason: "" } : { usable: false, reason: found.reason };
  }
  return verdict;
}

/** True when the sandbox suites cannot run here: gate them with `describe.skipIf(NO_SANDBOX)`. */
export const NO_SANDBOX = !sandboxVerdict().usable;

/** The one line a run prints when it skips the sandbox suites. */
export function skipNotice(reason: string): string {
  return `albedo tests: sandbox suites skipped: ${reason}. Install bubblewrap (apt-get install bubblewrap) to run them; ${REQUIRE_SANDBOX_ENV}=1 makes this a failure.`;
}

/** The warning a session prints when it runs its kernel without a sandbox: expected, and only then, on a machine without one. */
export function withoutSandboxWarning(stderr: string): string {
  return NO_SANDBOX ? stderr.replace(/^albedo warn: .*sandbox.*\n/gm, "") : stderr;
}

/** Vitest global setup: one line when the sandbox suites will be skipped; a failure when they are required. */
export default function setup(): void {
  const { usable, reason } = sandboxVerdict();
  if (usable) return;
  if (process.env[REQUIRE_SANDBOX_ENV] === "1") {
    throw new Error(`${REQUIRE_SANDBOX_ENV}=1 but bubblewrap cannot make a sandbox here: ${reason}. Install it (apt-get install bubblewrap) or allow user namespaces.`);
  }
  process.stderr.write(`${skipNotice(reason)}\n`);
}
