import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startKernel } from "../../src/kernel/index.js";
import { ipykernelSpec, runCleanups, tempDir } from "./fixtures.js";
import { alive } from "../support/process.js";

const BOOTS = 50;
const cleanups: Array<() => Promise<void>> = [];
afterEach(() => runCleanups(cleanups));

describe("K-2 readiness under repetition", () => {
  it(`boots, executes 1+1 and shuts down ${BOOTS} times in a row without losing a first message`, async () => {
    const dir = await tempDir(cleanups);
    const runDir = join(dir, "run");
    for (let boot = 0; boot < BOOTS; boot += 1) {
      const client = await startKernel({ spec: ipykernelSpec(), runDir, cwd: dir });
      cleanups.push(() => client.shutdown());
      const pid = client.pid!;
      const future = client.execute("1+1");
      const results: string[] = [];
      future.onOutput((output) => {
        if (output.header.msg_type === "execute_result") results.push((output.content as { data: Record<string, string> }).data["text/plain"]!);
      });
      const reply = await future.done;
      expect({ boot, status: reply.status, results }).toEqual({ boot, status: "ok", results: ["2"] });
      await client.shutdown();
      expect(alive(pid)).toBe(false);
      expect(await readdir(runDir)).toEqual([]);
    }
  }, 600_000);
});
