/**
 * A machine without bubblewrap: the sandbox suites skip with one line saying why and how to
 * install it, no other test fails for the missing sandbox, and CI's variable turns the skip into a
 * failure. Proven by running those suites again in a nested vitest whose PATH has no bwrap.
 */
import { readdirSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SKIP_BUILD_ENV } from "../support/build.js";
import { REQUIRE_SANDBOX_ENV } from "../support/sandbox.js";
import { nestedVitest } from "../support/nestedRun.js";
import { tempDirs } from "../support/tempDirs.js";

/** The suites that need a sandbox, and those that once failed on a machine without one. */
const SUITES = [
  "test/sandbox/escape.test.ts", "test/sandbox/ipykernel.test.ts", "test/sandbox/isolation.test.ts", "test/sandbox/limits.test.ts",
  "test/sandbox/signals.test.ts", "test/sandbox/modes.test.ts", "test/session/sandbox.test.ts", "test/cli/exec.test.ts", "test/daemon/restart.test.ts",
  "test/daemon/pool.test.ts",
];
/** Bound on one nested run: exec's and restart's suites boot real kernels. */
const NESTED_RUN_TIMEOUT_MS = 400_000;
const NOTICE = "albedo tests: sandbox suites skipped: bubblewrap (bwrap) not found on PATH.";

const temps = tempDirs("albedo-nobwrap-");
let bin: string;

/** A directory holding every program on PATH but bwrap, as links. */
function pathWithoutBwrap(): string {
  const dir = temps.make();
  for (const source of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) {
    let names: string[] = [];
    try {
      names = readdirSync(source);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name === "bwrap") continue;
      try {
        symlinkSync(join(source, name), join(dir, name));
      } catch {
        // The first directory on PATH that holds a name wins, as it would for a lookup.
      }
    }
  }
  return dir;
}

function vitest(files: readonly string[], extra: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return nestedVitest(files, { ...process.env, PATH: bin, [REQUIRE_SANDBOX_ENV]: undefined, ...extra }, NESTED_RUN_TIMEOUT_MS);
}

beforeAll(() => {
  bin = pathWithoutBwrap();
});
afterAll(() => temps.cleanup());

// A nested run must not start another one.
describe.skipIf(process.env[SKIP_BUILD_ENV] === "1")("K-10 a machine without bubblewrap", () => {
  it("skips the sandbox suites with one line saying why and how to install it; nothing fails", { timeout: NESTED_RUN_TIMEOUT_MS }, async () => {
    const { code, output } = await vitest(SUITES, {});
    expect(output.split(NOTICE).length - 1, output).toBe(1);
    expect(output).toContain("Install bubblewrap (apt-get install bubblewrap) to run them");
    expect(output).not.toMatch(/\bfailed\b/i);
    expect(code, output).toBe(0);
    expect(output).toMatch(/Tests\s+\d+ passed \| \d+ skipped/);
  });

  it(`fails the run instead when ${REQUIRE_SANDBOX_ENV}=1, as .ci/run sets it`, { timeout: 120_000 }, async () => {
    const { code, output } = await vitest(["test/sandbox/plan.test.ts"], { [REQUIRE_SANDBOX_ENV]: "1" });
    expect(code).not.toBe(0);
    expect(output).toContain(`${REQUIRE_SANDBOX_ENV}=1 but bubblewrap cannot make a sandbox here: bubblewrap (bwrap) not found on PATH`);
  });
});
