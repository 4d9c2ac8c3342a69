import { describe, expect, it, vi } from "vitest";
import { resolveKernelLaunch } from "../../src/kernel/index.js";

// Counts interpreter probes (each one is a Python start).
vi.mock("../../src/python/index.js", async (original) => {
  const real = await original<typeof import("../../src/python/index.js")>();
  return { ...real, resolvePython: vi.fn(real.resolvePython) };
});
const { resolvePython } = await import("../../src/python/index.js");

/** Sessions opening at once on a fresh runtime, as the bench's sixteen do. */
const OPENING_AT_ONCE = 8;

describe("K-1 sessions opening together probe their interpreter once", () => {
  it("shares one probe among concurrent launches, then answers from the cache", async () => {
    const launches = await Promise.all(Array.from({ length: OPENING_AT_ONCE }, () => resolveKernelLaunch({}, process.env)));
    expect(new Set(launches.map((launch) => launch.argv[0])).size).toBe(1);
    expect(vi.mocked(resolvePython)).toHaveBeenCalledTimes(1);
    await resolveKernelLaunch({}, process.env);
    expect(vi.mocked(resolvePython)).toHaveBeenCalledTimes(1);
  });
});
