import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { prepareSandbox, pythonReadPaths, resolveLimits, type ResourceLimits, type Sandbox } from "../../src/sandbox/index.js";
import { HIDE_TMPFS_BYTES } from "../../src/sandbox/mounts.js";
import { killTree, makeTree, profileOf, PYTHON, runPython, startPython, type Started, type Tree } from "./fixture.js";
import { NO_SANDBOX } from "../support/sandbox.js";

/** Forks the loop may attempt before it stops by itself: far above the test's process cap. */
const FORK_ATTEMPTS = 200;
/** Seconds after which the fork loop stops even if nothing failed. */
const FORK_LOOP_SECONDS = 10;
const TEST_PROCESSES = 32;

/** Forks sleeping children until fork fails or a bound is hit, reports, then stays alive to be killed. */
const FORK_BOMB = `
import json, os, time
forks, error, start = 0, None, time.time()
while forks < ${FORK_ATTEMPTS} and time.time() - start < ${FORK_LOOP_SECONDS}:
    try:
        pid = os.fork()
    except OSError as e:
        error = e.strerror
        break
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    forks += 1
print(json.dumps({"forks": forks, "error": error}), flush=True)
time.sleep(120)
`;

describe.skipIf(NO_SANDBOX)("K-10 resource limits", () => {
  let tree: Tree;
  let pythonPaths: string[];
  const sandboxes: Sandbox[] = [];
  const running: Started[] = [];

  beforeAll(async () => {
    tree = makeTree();
    pythonPaths = await pythonReadPaths(PYTHON);
  });
  afterEach(async () => {
    for (const started of running.splice(0)) await killTree(started);
    for (const sandbox of sandboxes.splice(0)) await sandbox.dispose();
  });
  afterAll(() => {
    tree?.remove();
  });

  function sandboxWith(limits: Partial<ResourceLimits>, pidsCgroup = true): Sandbox {
    const sandbox = prepareSandbox({ mode: "required", profile: profileOf(tree, pythonPaths), limits, pidsCgroup });
    sandboxes.push(sandbox);
    return sandbox;
  }

  it("applies each limit as both soft and hard, so the kernel cannot raise it back", async () => {
    const sandbox = sandboxWith({ memoryMB: 512, processes: 100, openFiles: 200 });
    const code = `
import resource as r
print([r.getrlimit(x) for x in (r.RLIMIT_AS, r.RLIMIT_NPROC, r.RLIMIT_NOFILE)])
try:
    r.setrlimit(r.RLIMIT_NOFILE, (400, 400)); print("raised")
except (ValueError, OSError) as e:
    print("refused")`;
    const run = await runPython(sandbox.wrap, code);
    const bytes = 512 * 1024 * 1024;
    expect(run.stdout.trim().split("\n")).toEqual([`[(${bytes}, ${bytes}), (100, 100), (200, 200)]`, "refused"]);
  });

  it("memory: allocating past the address-space cap raises MemoryError inside; the runtime carries on", async () => {
    const sandbox = sandboxWith({ memoryMB: 256 });
    const code = `
small = bytearray(32 * 1024 * 1024); print("32 MiB ok")
try:
    big = bytearray(512 * 1024 * 1024); print("512 MiB allocated")
except MemoryError:
    print("MemoryError")`;
    const run = await runPython(sandbox.wrap, code);
    expect(run.stdout.trim().split("\n")).toEqual(["32 MiB ok", "MemoryError"]);
    expect(spawnSync(process.execPath, ["-e", "process.exit(7)"]).status).toBe(7);
  });

  it("memory-backed places are bounded: /dev/shm by shmMB, the hiding tmpfs (/run, the state dir) at HIDE_TMPFS_BYTES; /tmp is on disk", async () => {
    const sandbox = sandboxWith({ shmMB: 4 });
    const code = `
import os
def fill(path, mib):
    try:
        with open(path, "wb") as f:
            for _ in range(mib): f.write(b"x" * 1024 * 1024)
        return "ok"
    except OSError as e:
        return e.strerror
print(fill("/dev/shm/big", 8), fill("/run/big", 2), fill(os.path.join(${JSON.stringify(tree.stateDir)}, "big"), 2), fill("/tmp/big", 8))`;
    const run = await runPython(sandbox.wrap, code);
    expect(run.stdout.trim()).toBe("No space left on device No space left on device No space left on device ok");
    expect(statSync(join(tree.runDir, "tmp", "big")).size).toBe(8 * 1024 * 1024);
    expect(HIDE_TMPFS_BYTES).toBe(1024 * 1024);
  });

  it("open files: opening past the cap fails with EMFILE", async () => {
    const sandbox = sandboxWith({ openFiles: 64 });
    const code = `
fs = []
try:
    for _ in range(200): fs.append(open("/dev/null"))
    print("opened all")
except OSError as e:
    print(e.strerror, len(fs) < 64)`;
    const run = await runPython(sandbox.wrap, code);
    expect(run.stdout.trim()).toBe("Too many open files True");
  });

  it("processes: a fork bomb is stopped by the cap when one holds, and killing bwrap reaps every process", async () => {
    const sandbox = sandboxWith({ processes: TEST_PROCESSES });
    if (sandbox.kind !== "bwrap") throw new Error("expected bwrap");
    const started = startPython(sandbox.wrap, FORK_BOMB);
    running.push(started);
    const report = JSON.parse(await started.firstLine) as { forks: number; error: string | null };
    if (sandbox.processCap === "none") {
      // Root without a writable cgroup: nothing caps the count; the loop's own bound stopped it.
      expect(report).toEqual({ forks: FORK_ATTEMPTS, error: null });
    } else {
      expect(report.error).toBe("Resource temporarily unavailable");
      expect(report.forks).toBeLessThan(TEST_PROCESSES);
    }
    running.splice(running.indexOf(started), 1);
    await killTree(started);
    expect(spawnSync(process.execPath, ["-e", "process.exit(7)"]).status).toBe(7);
  });

  it("processes: RLIMIT_NPROC alone binds a non-root user but not root (the reported processCap says which)", async () => {
    const sandbox = sandboxWith({ processes: TEST_PROCESSES }, false);
    if (sandbox.kind !== "bwrap") throw new Error("expected bwrap");
    const root = process.getuid?.() === 0;
    expect(sandbox.processCap).toBe(root ? "none" : "rlimit");
    if (root) expect(sandbox.warnings.join("\n")).toMatch(/root.*process limit does not hold/);
    const started = startPython(sandbox.wrap, FORK_BOMB);
    running.push(started);
    const report = JSON.parse(await started.firstLine) as { forks: number; error: string | null };
    if (root) expect(report).toEqual({ forks: FORK_ATTEMPTS, error: null });
    else expect(report.forks).toBeLessThan(TEST_PROCESSES);
  });
});

describe("K-10 limits settings", () => {
  it("fills defaults and refuses an out-of-range value, naming the limit and the value", () => {
    expect(resolveLimits({})).toEqual({ memoryMB: 4096, processes: 256, openFiles: 1024, shmMB: 64 });
    expect(resolveLimits({ openFiles: 64 }).openFiles).toBe(64);
    expect(() => resolveLimits({ memoryMB: 10 })).toThrow(/limits\.memoryMB .*got 10/);
    expect(() => resolveLimits({ processes: 1.5 })).toThrow(/limits\.processes .*got 1\.5/);
  });
});
