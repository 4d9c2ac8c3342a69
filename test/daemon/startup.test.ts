import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, call, envFor, type Dirs } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";
import { isSameProcessAlive, processStartTime } from "../../src/platform/index.js";
import { descendants, OWN_PID_NAMESPACE } from "../support/pidNamespace.js";
import { alive } from "../support/process.js";
import { NO_SANDBOX } from "../support/sandbox.js";

/** How long a refused `albedo serve` may take to exit; it never gets as far as listening. */
const REFUSAL_TIMEOUT_MS = 30_000;

const fixture = daemonFixture({ signal: "SIGKILL" });
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await gone;
    }
  }
});

/** A spawned `albedo serve` whose output and exit the test watches. */
interface Serve {
  readonly child: ChildProcess;
  out: string;
  err: string;
  exit: number | null | undefined;
}

function spawnServe(target: Dirs): Serve {
  return watch(spawn(process.execPath, [BIN, "serve", "--listen", "127.0.0.1:0"], { env: envFor(target), stdio: ["ignore", "pipe", "pipe"] }));
}

function watch(child: ChildProcess): Serve {
  children.push(child);
  const serve: Serve = { child, out: "", err: "", exit: undefined };
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (serve.out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (serve.err += chunk));
  child.on("exit", (code) => (serve.exit = code));
  return serve;
}

const listening = (serve: Serve) => /listening on (\S+)/.exec(serve.out)?.[1];

/** Runs `albedo serve` to its end, for a start that must be refused before it listens. */
function spawnServeOnce(target: Dirs): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [BIN, "serve", "--listen", "127.0.0.1:0", "--pool", "0"], { env: envFor(target), encoding: "utf8", timeout: REFUSAL_TIMEOUT_MS, killSignal: "SIGKILL" });
  return { status: run.status, stderr: run.stderr };
}

/** daemon.lock as it is while a daemon of this albedo holds it, and after: an empty 0600 file (the lock is the kernel's). */
function expectKernelLockFile(target: Dirs): void {
  const found = statSync(join(target.state, "daemon.lock"));
  expect({ size: found.size, mode: found.mode & 0o777 }).toEqual({ size: 0, mode: 0o600 });
}

/**
 * `albedo serve` started by a shell that first writes `lock` into daemon.lock as an earlier albedo
 * did, with `$$` standing for its own pid, then execs node: the daemon runs under the pid the lock
 * names, as a daemon restarted in a fresh container gets the pid its predecessor had.
 */
function serveUnderOwnPid(target: Dirs, lock: string): Serve {
  const script = `mkdir -p "$ALBEDO_HOME" && printf '%s\\n' "${lock.replace(/"/g, '\\"')}" > "$ALBEDO_HOME/daemon.lock"; exec "$NODE" "$BIN" serve --listen 127.0.0.1:0 --pool 0`;
  return watch(spawn("/bin/sh", ["-c", script], { env: { ...envFor(target), NODE: process.execPath, BIN }, stdio: ["ignore", "pipe", "pipe"] }));
}

describe("D-1 one daemon per state dir", () => {
  it("of two concurrent `albedo serve`, exactly one listens and the other exits 1; the lock goes with a kill -9 and the next start takes it", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    const both = [spawnServe(dirs), spawnServe(dirs)];
    await poll(() => both.every((serve) => listening(serve) !== undefined || serve.exit !== undefined), { what: "both to listen or exit" });
    const winners = both.filter((serve) => serve.exit === undefined);
    const losers = both.filter((serve) => serve.exit !== undefined);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(losers[0]!.exit).toBe(1);
    expect(losers[0]!.err).toContain("already runs");
    const winner = winners[0]!;
    const token = readFileSync(join(dirs.state, "daemon.token"), "utf8").trim();
    expect((await call({ url: listening(winner)!, token }, "GET", "/health")).body).toMatchObject({ ok: true, pid: winner.child.pid });
    expectKernelLockFile(dirs);

    const gone = new Promise((resolve) => winner.child.once("exit", resolve));
    winner.child.kill("SIGKILL");
    await gone;
    const next = await fixture.start();
    next.process.kill("SIGTERM");
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expectKernelLockFile(dirs);
  });
});

/** The `albedo serve` process among `pid`'s descendants. */
function serveProcessUnder(pid: number): number {
  const found = descendants(pid).find((candidate) => readFileSync(`/proc/${candidate}/cmdline`, "utf8").split("\0").includes("serve"));
  if (found === undefined) throw new Error(`no albedo serve under process ${pid}`);
  return found;
}

describe.skipIf(NO_SANDBOX)("D-1 one daemon per state dir across pid namespaces (containers sharing a home)", () => {
  it("a daemon whose pid the next one cannot see still holds the state dir: the next refuses, naming it; after a kill -9 of the first it starts", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    const argv = [...OWN_PID_NAMESPACE, process.execPath, BIN, "serve", "--listen", "127.0.0.1:0", "--pool", "0"];
    const first = watch(spawn(argv[0]!, argv.slice(1), { env: envFor(dirs), stdio: ["ignore", "pipe", "pipe"] }));
    await poll(() => listening(first) !== undefined || first.exit !== undefined, { what: "the first daemon to listen or exit" });
    expect({ exit: first.exit, err: first.err }).toEqual({ exit: undefined, err: "" });
    const firstPid = serveProcessUnder(first.child.pid!);
    const info = JSON.parse(readFileSync(join(dirs.state, "daemon.json"), "utf8")) as { url: string; pid: number; start_time?: string };
    const token = readFileSync(join(dirs.state, "daemon.token"), "utf8").trim();
    // What fooled a pid lock: the pid the first daemon wrote down is not its pid here, and whatever runs under it here is another process.
    expect(info.pid).not.toBe(firstPid);
    expect(isSameProcessAlive(info)).toBe(false);

    const second = spawnServe(dirs);
    await poll(() => listening(second) !== undefined || second.exit !== undefined, { what: "the second daemon to listen or exit" });
    expect(second.exit).toBe(1);
    expect(second.err).toContain(`a daemon already runs for this state dir: ${join(dirs.state, "daemon.lock")} is held by a running process; daemon.json names ${info.url}, pid ${info.pid}`);
    expect((await call({ url: info.url, token }, "GET", "/health")).body).toMatchObject({ ok: true });

    process.kill(firstPid, "SIGKILL");
    await poll(() => !alive(firstPid) && first.exit !== undefined, { what: "the first daemon and its namespace to be gone" });
    const next = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    expect((await call(next, "GET", "/health")).body).toMatchObject({ ok: true, pid: next.process.pid });
  });
});

describe("D-1 a kernel that cannot start is 503 kernel_unavailable", () => {
  it("POST /sessions with ALBEDO_PYTHON naming no interpreter answers 503 with the reason, and the daemon lives on", { timeout: 60_000 }, async () => {
    const { dirs } = fixture;
    const missing = join(dirs.root, "no-such-python");
    const daemon = await fixture.start(undefined, { ALBEDO_PYTHON: missing });
    const res = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body).toMatchObject({ status: 503, code: "kernel_unavailable", type: "urn:albedo:problem:kernel_unavailable" });
    expect(res.body.detail).toContain(missing);
    expect((await call(daemon, "GET", "/health")).body).toMatchObject({ ok: true, sessions: 0 });
  });
});

describe("D-1 an earlier albedo's daemon.lock names a process (pid and start time), not just a pid", () => {
  it("a lock naming the daemon's own pid (a restarted container) does not stop it, with or without a start time", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    for (const lock of ["$$", '{"pid": $$, "start_time": "1"}']) {
      const serve = serveUnderOwnPid(dirs, lock);
      await poll(() => listening(serve) !== undefined || serve.exit !== undefined, { what: "the daemon to listen or exit" });
      expect({ lock, exit: serve.exit, err: serve.err }).toEqual({ lock, exit: undefined, err: "" });
      expectKernelLockFile(dirs);
      serve.child.kill("SIGTERM");
      await poll(() => serve.exit !== undefined, { what: "the daemon to exit" });
    }
  });

  it("a lock naming a live unrelated process with another start time is stale: the daemon starts", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    await mkdir(dirs.state, { recursive: true });
    // The test runner is alive, but it did not start at clock tick 1.
    await writeFile(join(dirs.state, "daemon.lock"), `${JSON.stringify({ pid: process.pid, start_time: "1" })}\n`);
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    expectKernelLockFile(dirs);
    expect(JSON.parse(readFileSync(join(dirs.state, "daemon.json"), "utf8"))).toMatchObject({ pid: daemon.process.pid, start_time: expect.stringMatching(/^\d+$/) });
  });

  it("a lock naming a process that still runs refuses the start, naming its pid", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    await mkdir(dirs.state, { recursive: true });
    const earlier = spawn("sleep", ["600"], { stdio: "ignore" });
    children.push(earlier);
    await new Promise((resolve) => earlier.once("spawn", resolve));
    await writeFile(join(dirs.state, "daemon.lock"), `${JSON.stringify({ pid: earlier.pid, start_time: processStartTime(earlier.pid!) })}\n`);
    const refused = spawnServeOnce(dirs);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`a daemon already runs for this state dir: ${join(dirs.state, "daemon.lock")} is held by pid ${earlier.pid}`);
  });

  it("a lock held by a daemon that really runs still refuses a second one, even when daemon.json is gone", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    const first = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    await rm(join(dirs.state, "daemon.json"));
    const second = spawnServe(dirs);
    await poll(() => second.exit !== undefined, { what: "the second daemon to exit" });
    expect(second.exit).toBe(1);
    expect(second.err).toContain(`${join(dirs.state, "daemon.lock")} is held by a running process (no daemon.json names it yet)`);
    expect((await call(first, "GET", "/health")).body).toMatchObject({ ok: true, pid: first.process.pid });
  });
});
