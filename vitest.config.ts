import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    // The build first; then one line if the sandbox suites will be skipped (or a failure, where CI requires them), and one per other skipped group.
    globalSetup: ["test/support/build.ts", "test/support/sandbox.ts", "test/support/skips.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Kernel tests start real processes; two workers match the two-core CI machine.
    maxWorkers: 2,
  },
});
