/**
 * The process-wide budget of kernel bytes in flight, as logic: which account it cuts, and when.
 * (test/daemon/kernelMessages.test.ts floods a real daemon with real kernels.)
 */
import { describe, expect, it } from "vitest";
import { KernelByteBudget, kernelBytesInFlight } from "../../src/kernel/budget.js";
import { KERNEL_RECEIVE_HIGH_WATER_MARK, MAX_KERNEL_BYTES_IN_FLIGHT } from "../../src/kernel/limits.js";

const MIB = 1024 * 1024;

function accounts(limitMib: number, names: readonly string[]) {
  const budget = new KernelByteBudget(limitMib * MIB, "TEST_BUDGET");
  const cuts = new Map<string, string>();
  const opened = Object.fromEntries(names.map((name) => [name, budget.open(name, (reason) => cuts.set(name, reason))]));
  return { budget, cuts, opened };
}

describe("B K-2 KernelByteBudget", () => {
  it("the process's budget is MAX_KERNEL_BYTES_IN_FLIGHT", () => {
    expect(kernelBytesInFlight.limit).toBe(MAX_KERNEL_BYTES_IN_FLIGHT);
  });

  it("counts a socket with more waiting as holding KERNEL_RECEIVE_HIGH_WATER_MARK + 1 more of the message just taken, and nothing once drained", () => {
    const { opened } = accounts(10_000, ["a"]);
    const frames = [Buffer.alloc(0)];
    expect(opened.a!.take("iopub", frames, 10 * MIB, true)).toBe(true);
    expect(opened.a!.held).toBe(10 * MIB * (KERNEL_RECEIVE_HIGH_WATER_MARK + 2));
    opened.a!.drained("iopub");
    expect(opened.a!.held).toBe(10 * MIB);
  });

  it("past the limit it cuts the account holding the most, with a reason naming the limit and the figures; the quiet one is never cut", () => {
    const { budget, cuts, opened } = accounts(100, ["quiet", "small", "big"]);
    const keep: object[] = [];
    const take = (name: string, mib: number, more: boolean): boolean => {
      const frames = {};
      keep.push(frames);
      return opened[name]!.take("iopub", frames, mib * MIB, more);
    };
    expect(take("quiet", 1, false)).toBe(true);
    expect(take("small", 10, true)).toBe(true); // 30 MiB
    expect(take("big", 20, false)).toBe(true); // 20 MiB, 51 in all
    expect(cuts.size).toBe(0);
    // big now holds 20 + 20 taken and 40 queued: 80, 111 in all.
    expect(take("big", 20, true)).toBe(false);
    expect([...cuts.keys()]).toEqual(["big"]);
    expect(cuts.get("big")).toBe(
      "the kernel's messages took the runtime past TEST_BUDGET (100.0 MiB) for all kernels together: 111.0 MiB held, 80.0 MiB of it from this kernel, the most of any; albedo cut its connection",
    );
    expect(opened.big!.closed).toBe(true);
    expect(budget.held).toBe(31 * MIB);
    // A cut account takes nothing more, and what it held no longer counts.
    expect(take("big", 20, true)).toBe(false);
    expect(budget.held).toBe(31 * MIB);
    expect(opened.quiet!.closed).toBe(false);
  });

  it("an account closed by its owner leaves the sum", () => {
    const { budget, opened } = accounts(100, ["a"]);
    const frames = {};
    opened.a!.take("iopub", frames, 50 * MIB, false);
    expect(budget.held).toBe(50 * MIB);
    opened.a!.close();
    expect(budget.held).toBe(0);
  });
});
