import { describe, expect, it, vi } from "vitest";
import { detectSandbox, warmSandboxProbe } from "../../src/sandbox/index.js";

// Counts the probe sandboxes started (each one is a bwrap run).
vi.mock("node:child_process", async (original) => {
  const real = await original<typeof import("node:child_process")>();
  return { ...real, execFile: vi.fn(real.execFile) };
});
const { execFile } = await import("node:child_process");

/** Sessions opening at once on a fresh runtime. */
const OPENING_AT_ONCE = 8;

describe("K-10 sessions opening together share one bubblewrap probe", () => {
  it("starts one probe for concurrent warm-ups, and detectSandbox then answers from its result", async () => {
    await Promise.all(Array.from({ length: OPENING_AT_ONCE }, () => warmSandboxProbe()));
    const probes = vi.mocked(execFile).mock.calls.filter(([file]) => String(file).endsWith("bwrap"));
    const found = detectSandbox();
    expect(probes).toHaveLength(!found.usable && found.missing ? 0 : 1);
  });
});
