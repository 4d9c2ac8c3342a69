import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { globalSettingsTarget, patchSkills, readSettings, SETTINGS_LOCK_FILE, updateSettings } from "../../src/settings/index.js";
import { isAppError } from "../../src/errors/index.js";
import { killChild, startChild, waitForOutput, type Child } from "./support/children.js";
import { tempDirs } from "../support/tempDirs.js";
import { isSameProcessAlive, processIdentity, processStartTime } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { OWN_PID_NAMESPACE } from "../support/pidNamespace.js";
import { NO_SANDBOX } from "../support/sandbox.js";

// Every read and stat goes through unchanged; the spies let a test see a writer look at a held lock again and again.
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  return { ...real, readFile: vi.fn(real.readFile), stat: vi.fn(real.stat) };
});

/** Child processes boot TypeScript through a loader; on a busy two-core machine that takes seconds. */
const PROCESS_TEST_TIMEOUT_MS = 120_000;
const COUNTER_CHILD = fileURLToPath(new URL("./support/counterChild.ts", import.meta.url));
const HOLDER_CHILD = fileURLToPath(new URL("./support/holderChild.ts", import.meta.url));
const temps = tempDirs("albedo-settings-proc-");
const children: Child[] = [];
const sleepers: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(killChild));
  for (const sleeper of sleepers.splice(0)) {
    if (sleeper.exitCode !== null || sleeper.signalCode !== null) continue;
    const gone = new Promise((resolve) => sleeper.once("exit", resolve));
    sleeper.kill("SIGKILL");
    await gone;
  }
  temps.cleanup();
});

/** A live process other than this one (killed after the test). */
async function liveProcess(): Promise<ChildProcess> {
  const sleeper = spawn("sleep", ["600"], { stdio: "ignore" });
  sleepers.push(sleeper);
  await new Promise((resolve, reject) => (sleeper.once("spawn", resolve), sleeper.once("error", reject)));
  return sleeper;
}

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
    // The dead writer's lock went with it; any half-written temp file is cleaned up by the next writer.
    const next = await updateSettings(target, (current) => ({ ...current, counter: lastCounter + 1 }));
    expect(next.settings.counter).toBe(lastCounter + 1);
    expect(readdirSync(state).sort()).toEqual(["settings.json", SETTINGS_LOCK_FILE]);
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

  it("removes an earlier albedo's pid lock whose holder is dead", async () => {
    const state = temps.make();
    // spawnSync returns after the child is reaped, so its pid names no live process.
    const deadPid = spawnSync("true").pid;
    writeFileSync(join(state, SETTINGS_LOCK_FILE), JSON.stringify({ pid: deadPid, token: "dead" }));
    const next = await updateSettings(globalSettingsTarget(state), () => ({ network: true }));
    expect(next.settings).toEqual({ network: true });
    expect(readdirSync(state).sort()).toEqual(["settings.json", SETTINGS_LOCK_FILE]);
    expect(statSync(join(state, SETTINGS_LOCK_FILE)).size).toBe(0);
  });

  it("waits while the live process an earlier albedo's pid lock names holds it", async () => {
    const state = temps.make();
    const lockFile = join(state, SETTINGS_LOCK_FILE);
    const holder = await liveProcess();
    writeFileSync(lockFile, JSON.stringify({ ...processIdentity(holder.pid!), token: "held" }));
    const looks = () => vi.mocked(readFile).mock.calls.filter(([path]) => path === lockFile).length;
    const before = looks();
    let finished = false;
    const update = updateSettings(globalSettingsTarget(state), () => ({ network: true })).then((result) => {
      finished = true;
      return result;
    });
    // Observed retries, not a fixed sleep: the writer found the holder alive three times and kept waiting.
    await poll(() => looks() >= before + 3, { what: "the writer to look at the held lock three times" });
    expect(finished).toBe(false);
    expect(readdirSync(state)).toEqual([SETTINGS_LOCK_FILE]);
    rmSync(lockFile);
    expect((await update).settings).toEqual({ network: true });
  });
});

describe.skipIf(NO_SANDBOX)("D-4 the settings lock holds across pid namespaces (containers sharing a home)", () => {
  it("while a writer in another pid namespace is inside the lock this one waits; with the same expected revision only the first writes", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const state = temps.make();
    const target = globalSettingsTarget(state);
    const start = await updateSettings(target, () => ({ skills: { off: ["start"] } }));
    const release = join(temps.make(), "release");
    const holder = startChild(HOLDER_CHILD, [state, start.revision, "theirs", release], process.env, OWN_PID_NAMESPACE);
    children.push(holder);
    await waitForOutput(holder, (out) => out.includes("holding"));

    const lockFile = join(state, SETTINGS_LOCK_FILE);
    const looks = () => vi.mocked(stat).mock.calls.filter(([path]) => path === lockFile).length;
    const before = looks();
    let settled = false;
    const mine = updateSettings(target, (current) => patchSkills(current, { off: ["mine"] }), { expectedRevision: start.revision }).then(
      (written) => ((settled = true), written),
      (error: unknown) => ((settled = true), error),
    );
    // Observed retries, not a fixed sleep: the writer found the lock held three times and kept waiting.
    await poll(() => settled || looks() >= before + 3, { what: "this writer to find the lock held three times" });
    expect(settled).toBe(false);
    writeFileSync(release, "");
    await waitForOutput(holder, (out) => out.includes("wrote"));
    expect(isAppError(await mine, "conflict")).toBe(true);
    expect((await readSettings(target)).settings.skills?.off).toEqual(["start", "theirs"]);
  });
});

describe("D-4 an earlier albedo's settings.lock is held by a process, not by a pid that was reused", () => {
  it("breaks a lock naming a live process whose start time differs (its pid was given to another process)", async () => {
    const state = temps.make();
    const other = await liveProcess();
    writeFileSync(join(state, SETTINGS_LOCK_FILE), JSON.stringify({ pid: other.pid, start_time: "1", token: "reused" }));
    const next = await updateSettings(globalSettingsTarget(state), () => ({ network: true }));
    expect(next.settings).toEqual({ network: true });
    expect(readdirSync(state).sort()).toEqual(["settings.json", SETTINGS_LOCK_FILE]);
  });

  it("breaks a lock naming this very process that this process did not take (a restart under the same pid)", async () => {
    const state = temps.make();
    writeFileSync(join(state, SETTINGS_LOCK_FILE), JSON.stringify({ ...processIdentity(process.pid), token: "before-the-restart" }));
    const next = await updateSettings(globalSettingsTarget(state), () => ({ network: true }));
    expect(next.settings).toEqual({ network: true });
  });

  it("reads a process's start time from /proc: stable for one process, absent for none", async () => {
    const child = await liveProcess();
    expect(processStartTime(child.pid!)).toMatch(/^\d+$/);
    expect(processStartTime(child.pid!)).toBe(processStartTime(child.pid!));
    expect(isSameProcessAlive({ pid: child.pid!, start_time: processStartTime(child.pid!)! })).toBe(true);
    expect(isSameProcessAlive({ pid: child.pid!, start_time: "1" })).toBe(false);
    expect(processStartTime(spawnSync("true").pid!)).toBeUndefined();
  });
});
