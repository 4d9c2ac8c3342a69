import { describe, expect, it } from "vitest";
import { ownLimit, type ResourceLimit, type ResourceName } from "../../src/platform/index.js";
import { resolveLimits } from "../../src/sandbox/index.js";
import { withinOwnLimits } from "../../src/sandbox/limits.js";

const TABLE = [
  "Limit                     Soft Limit           Hard Limit           Units     ",
  "Max processes             4000                 8000                 processes ",
  "Max open files            512                  512                  files     ",
  "Max address space         unlimited            unlimited            bytes     ",
].join("\n");

function fixed(table: Partial<Record<ResourceName, ResourceLimit>>): (name: ResourceName) => ResourceLimit | undefined {
  return (name) => table[name];
}

describe("K-10 a kernel's limits never ask for more than the runtime's own hard limits", () => {
  it("reads soft and hard limits from /proc/self/limits, unlimited as Infinity", () => {
    expect(ownLimit("openFiles", TABLE)).toEqual({ soft: 512, hard: 512 });
    expect(ownLimit("processes", TABLE)).toEqual({ soft: 4000, hard: 8000 });
    expect(ownLimit("addressSpaceBytes", TABLE)).toEqual({ soft: Infinity, hard: Infinity });
    expect(ownLimit("openFiles", "Limit Soft Hard\n")).toBeUndefined();
    expect(ownLimit("openFiles")?.hard).toBeGreaterThan(0);
  });

  it("lowers a limit above the hard one to it, with a warning naming both; one at or below it is kept", () => {
    const asked = resolveLimits({ openFiles: 1024, processes: 8000, memoryMB: 4096 });
    const { limits, warnings } = withinOwnLimits(asked, fixed({ openFiles: { soft: 512, hard: 512 }, processes: { soft: 8000, hard: 8000 }, addressSpaceBytes: { soft: 2 ** 31, hard: 2 ** 31 } }));
    expect(limits).toEqual({ ...asked, openFiles: 512, memoryMB: 2048 });
    expect(warnings).toEqual([
      expect.stringContaining("limits.memoryMB 4096 is above this process's own hard limit (2048)"),
      expect.stringContaining("limits.openFiles 1024 is above this process's own hard limit (512)"),
    ]);
  });

  it("keeps every limit when the own ones are unlimited or unknown", () => {
    const asked = resolveLimits({});
    expect(withinOwnLimits(asked, fixed({ openFiles: { soft: Infinity, hard: Infinity } }))).toEqual({ limits: asked, warnings: [] });
  });
});
