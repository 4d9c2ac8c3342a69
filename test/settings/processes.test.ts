import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { globalSettingsTarget, readSettings, SETTINGS_LOCK_FILE, updateSettings } from "../../src/settings/index.js";
import { killChild, startChild, waitForOutput, type Child } from "./support/children.js";
import { tempDirs } from "./support/tempDirs.js";

/** Child processes boot TypeScript through a loader; on a busy two-core machine that takes seconds. */
const PROCESS_TEST_TIMEOUT_MS = 120_000;
const COUNTER_CHILD = fileURLToPath(new URL("./support/counterChild.ts", import.meta.url));
const temps = tempDirs("settings-proc");
const children: Child[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(killChild));
  temps.cleanup();
});

function counterChild(state: string, count: number | "forever", padBytes = 0): Child {
  const child = startChild(COUNTER_CHILD, [state, String(count), String(padBytes)]);
  children.push(child);
  return child;
}

function ticks(out: string): number {
  return out.split("\n").filter((line) => line.startsWith("tick ")).length;
}

/** Parses the target as a reader would; throws if it is not one complete document. */
function parseTarget(file: string): { counter: number; pad: string } {
  return JSON.parse(readFileSync(file, "utf8")) as { counter: number; pad: string };
}

describe("D-4 atomic writes survive kill -9", () => {
  it("leaves the old or the new complete file whenever a writer is killed mid-loop", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    const pad = 64 * 1024;
    let lastCounter = 0;
    for (let round = 1; round <= 2; round += 1) {
      const child = counterChild(state, "forever", pad);
      await waitForOutput(child, (out) => ticks(out) >= 3 * round);
      // Readers during the loop never see a partial file either.
      for (let read = 0; read < 20; read += 1) expect(parseTarget(target.file).pad.length).toBe(pad);
      await killChild(child);
      const after = parseTarget(target.file);
      expect(after.pad.length).toBe(pad);
      expect(after.counter).toBeGreaterThanOrEqual(lastCounter + 3);
      lastCounter = after.counter;
    }
    // The dead writer's lock file and any half-written temp file are cleaned up by the next writer.
    const next = await updateSettings(target, (current) => ({ ...current, counter: lastCounter + 1 }));
    expect(next.settings.counter).toBe(lastCounter + 1);
    expect(readdirSync(state)).toEqual(["settings.json"]);
  });
});

describe("D-4 one lock per state dir across processes", () => {
  it("two processes incrementing N times each end at 2N", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const state = temps.make();
    const perChild = 40;
    const first = counterChild(state, perChild);
    const second = counterChild(state, perChild);
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect((await readSettings(globalSettingsTarget(state))).settings.counter).toBe(2 * perChild);
  });

  it("breaks a lock file whose holder pid is dead", async () => {
    const state = temps.make();
    // spawnSync returns after the child is reaped, so its pid names no live process.
    const deadPid = spawnSync("true").pid;
    writeFileSync(join(state, SETTINGS_LOCK_FILE), JSON.stringify({ pid: deadPid, token: "dead" }));
    const next = await updateSettings(globalSettingsTarget(state), () => ({ network: true }));
    expect(next.settings).toEqual({ network: true });
    expect(readdirSync(state)).toEqual(["settings.json"]);
  });

  it("waits while a live process holds the lock file", async () => {
    const state = temps.make();
    const lockFile = join(state, SETTINGS_LOCK_FILE);
    // This test process is alive, so a lock naming its pid is held, not stale.
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, token: "held" }));
    let finished = false;
    const update = updateSettings(globalSettingsTarget(state), () => ({ network: true })).then((result) => {
      finished = true;
      return result;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(finished).toBe(false);
    expect(readdirSync(state)).toEqual([SETTINGS_LOCK_FILE]);
    rmSync(lockFile);
    expect((await update).settings).toEqual({ network: true });
  });
});
