import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    globalSetup: ["test/support/build.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Kernel tests start real processes; two workers match the two-core CI machine.
    maxWorkers: 2,
  },
});
