import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // The build first; then the Jupyter test venv, made once (or one line per group that needs it, or a failure under CI);
    // then one line if the sandbox suites will be skipped (or a failure, where CI requires them), and one per other skipped group.
    // Last, a check after the run that no test wrote a tracked file.
    globalSetup: ["test/support/build.ts", "test/support/testVenvSetup.ts", "test/support/sandbox.ts", "test/support/skips.ts", "test/support/trackedFiles.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Kernel tests start real processes; two workers match the two-core CI machine.
    maxWorkers: 2,
  },
});
