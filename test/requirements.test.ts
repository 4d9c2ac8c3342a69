import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./daemon/support/daemon.js";

describe("test/requirements.md maps every requirement id to the tests that name it", () => {
  it("is what `npm run requirements` generates from the describe names now", () => {
    const check = spawnSync(process.execPath, [join(ROOT, "scripts", "requirements.mjs"), "--check"], { encoding: "utf8" });
    expect(check.status, check.stderr).toBe(0);
  });
});
