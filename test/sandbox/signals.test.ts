import type { Writable } from "node:stream";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { prepareSandbox, pythonReadPaths, sandboxedPid, signalSandboxed, type Sandbox } from "../../src/sandbox/index.js";
import { descendants, killTree, makeTree, profileOf, PYTHON, startPython, type Started, type Tree } from "./fixture.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";

/** How long a test waits for a signal's effect to show. */
const EFFECT_TIMEOUT_MS = 10_000;

/** Counts SIGINTs instead of dying, forks a sleeping child, and reports each step on stdout. */
const SIGNAL_TARGET = `
import os, signal, sys, time
got = []
signal.signal(signal.SIGINT, lambda *a: got.append(1))
if os.fork() == 0:
    time.sleep(120); os._exit(0)
print("ready", os.getpid(), flush=True)
deadline = time.time() + 20
while not got and time.time() < deadline: time.sleep(0.05)
print("interrupted" if got else "timeout", flush=True)
`;

describe.skipIf(NO_SANDBOX)("K-10 signals and process lifetime under bwrap", () => {
  let tree: Tree;
  let sandbox: Sandbox;
  const running: Started[] = [];

  beforeAll(async () => {
    tree = makeTree();
    sandbox = prepareSandbox({ mode: "required", profile: profileOf(tree, await pythonReadPaths(PYTHON)), pidsCgroup: false });
  });
  afterEach(async () => {
    for (const started of running.splice(0)) await killTree(started);
  });
  afterAll(async () => {
    await sandbox?.dispose();
    tree?.remove();
  });

  function start(): Started {
    const started = startPython(sandbox.wrap, SIGNAL_TARGET);
    running.push(started);
    return started;
  }

  it("bwrap does not forward SIGINT: signalling it ends the sandbox, so the sandbox asks for message-mode interrupts", async () => {
    expect(sandbox.kind === "bwrap" && sandbox.interruptMode).toBe("message");
    const started = start();
    await started.firstLine;
    const tree_ = descendants(started.child.pid!);
    started.child.kill("SIGINT");
    const [, signal] = await started.exited;
    expect(signal).toBe("SIGINT");
    await poll(() => tree_.every((pid) => !alive(pid)), { timeoutMs: EFFECT_TIMEOUT_MS });
  });

  it("signalSandboxed delivers SIGINT to the sandboxed Python itself, and bwrap stays up", async () => {
    const started = start();
    await started.firstLine;
    const inner = sandboxedPid(started.child.pid!);
    expect(inner).toBeGreaterThan(0);
    expect(signalSandboxed(started.child.pid!, "SIGINT")).toBe(true);
    let out = "";
    started.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    const [code] = await started.exited;
    expect(out).toContain("interrupted");
    expect(code).toBe(0);
  });

  it("SIGTERM to bwrap (the shutdown ladder) ends the kernel and everything it forked", async () => {
    const started = start();
    await started.firstLine;
    const tree_ = descendants(started.child.pid!);
    expect(tree_.length).toBeGreaterThanOrEqual(3);
    started.child.kill("SIGTERM");
    await started.exited;
    await poll(() => tree_.every((pid) => !alive(pid)), { timeoutMs: EFFECT_TIMEOUT_MS });
  });

  it("when the runtime that spawned bwrap dies, the sandbox and its processes die too (--die-with-parent)", async () => {
    const launch = sandbox.wrap!({ argv: [PYTHON, "-c", SIGNAL_TARGET], env: process.env, connection: "{}\n" });
    const quoted = launch.argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
    // A stand-in runtime: a shell that starts the sandbox (handing on its descriptors), reports bwrap's pid and waits.
    const runtime = spawn("/bin/sh", ["-c", `${quoted} >/dev/null & echo $!; wait`], { stdio: ["ignore", "pipe", "inherit", ...launch.fds, "pipe"] });
    (runtime.stdio[3 + launch.fds.length] as Writable).end(launch.feed);
    const bwrapPid = await new Promise<number>((resolve) => runtime.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))));
    await poll(() => sandboxedPid(bwrapPid) !== undefined, { timeoutMs: EFFECT_TIMEOUT_MS });
    const tree_ = [bwrapPid, ...descendants(bwrapPid)];
    runtime.kill("SIGKILL");
    const allGone = await poll(() => tree_.every((pid) => !alive(pid)), { timeoutMs: EFFECT_TIMEOUT_MS }).then(() => true, () => false);
    const left = tree_.filter(alive);
    const described = left.map((pid) => `${pid}: ${statLine(pid)}`);
    for (const pid of left) killQuietly(pid);
    expect(allGone, `still running: ${described.join("; ")}`).toBe(true);
  });
});

function statLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").slice(0, 80);
  } catch {
    return "gone";
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // exited meanwhile
  }
}
