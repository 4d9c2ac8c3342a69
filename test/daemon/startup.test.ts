import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, call, envFor, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "./support/daemon.js";
import { poll } from "../support/poll.js";

const daemons: DaemonProcess[] = [];
const children: ChildProcess[] = [];
let dirs: Dirs | undefined;

afterEach(async () => {
  for (const daemon of daemons.splice(0)) await killDaemon(daemon);
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await gone;
    }
  }
  await dirs?.cleanup();
  dirs = undefined;
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

/** What daemon.lock names. */
function lockHolder(target: Dirs): { pid: number; start_time?: string } {
  return JSON.parse(readFileSync(join(target.state, "daemon.lock"), "utf8")) as { pid: number; start_time?: string };
}

/**
 * `albedo serve` started by a shell that first writes `lock` into daemon.lock, with `$$` standing
 * for its own pid, then execs node: the daemon runs under the pid the lock names, as a daemon
 * restarted in a fresh container gets the pid its predecessor had.
 */
function serveUnderOwnPid(target: Dirs, lock: string): Serve {
  const script = `mkdir -p "$ALBEDO_HOME" && printf '%s\\n' "${lock.replace(/"/g, '\\"')}" > "$ALBEDO_HOME/daemon.lock"; exec "$NODE" "$BIN" serve --listen 127.0.0.1:0 --pool 0`;
  return watch(spawn("/bin/sh", ["-c", script], { env: { ...envFor(target), NODE: process.execPath, BIN }, stdio: ["ignore", "pipe", "pipe"] }));
}

describe("D-1 one daemon per state dir", () => {
  it("of two concurrent `albedo serve`, exactly one listens and the other exits 1; a kill -9 leaves a stale lock the next start replaces", { timeout: 120_000 }, async () => {
    dirs = await makeDirs();
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
    expect(lockHolder(dirs).pid).toBe(winner.child.pid);

    const gone = new Promise((resolve) => winner.child.once("exit", resolve));
    winner.child.kill("SIGKILL");
    await gone;
    expect(existsSync(join(dirs.state, "daemon.lock"))).toBe(true);
    const next = await startDaemon(dirs);
    daemons.push(next);
    expect(lockHolder(dirs).pid).toBe(next.process.pid);
    next.process.kill("SIGTERM");
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dirs.state, "daemon.lock"))).toBe(false);
  });
});

describe("D-1 a kernel that cannot start is 503 kernel_unavailable", () => {
  it("POST /sessions with ALBEDO_PYTHON naming no interpreter answers 503 with the reason, and the daemon lives on", { timeout: 60_000 }, async () => {
    dirs = await makeDirs();
    const missing = join(dirs.root, "no-such-python");
    const daemon = await startDaemon(dirs, undefined, { ALBEDO_PYTHON: missing });
    daemons.push(daemon);
    const res = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body).toMatchObject({ status: 503, code: "kernel_unavailable", type: "urn:albedo:problem:kernel_unavailable" });
    expect(res.body.detail).toContain(missing);
    expect((await call(daemon, "GET", "/health")).body).toMatchObject({ ok: true, sessions: 0 });
  });
});

describe("D-1 daemon.lock names a process (pid and start time), not just a pid", () => {
  it("a lock naming the daemon's own pid (a restarted container) does not stop it, with or without a start time", { timeout: 120_000 }, async () => {
    dirs = await makeDirs();
    for (const lock of ["$$", '{"pid": $$, "start_time": "1"}']) {
      const serve = serveUnderOwnPid(dirs, lock);
      await poll(() => listening(serve) !== undefined || serve.exit !== undefined, { what: "the daemon to listen or exit" });
      expect({ lock, exit: serve.exit, err: serve.err }).toEqual({ lock, exit: undefined, err: "" });
      expect(lockHolder(dirs)).toEqual({ pid: serve.child.pid, start_time: expect.stringMatching(/^\d+$/) });
      serve.child.kill("SIGTERM");
      await poll(() => serve.exit !== undefined, { what: "the daemon to exit" });
      expect(existsSync(join(dirs.state, "daemon.lock"))).toBe(false);
    }
  });

  it("a lock naming a live unrelated process with another start time is stale: the daemon starts", { timeout: 120_000 }, async () => {
    dirs = await makeDirs();
    await mkdir(dirs.state, { recursive: true });
    // The test runner is alive, but it did not start at clock tick 1.
    await writeFile(join(dirs.state, "daemon.lock"), `${JSON.stringify({ pid: process.pid, start_time: "1" })}\n`);
    const daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    daemons.push(daemon);
    expect(lockHolder(dirs).pid).toBe(daemon.process.pid);
    expect(JSON.parse(readFileSync(join(dirs.state, "daemon.json"), "utf8"))).toMatchObject({ pid: daemon.process.pid, start_time: lockHolder(dirs).start_time });
  });

  it("a lock held by a daemon that really runs still refuses a second one, even when daemon.json is gone", { timeout: 120_000 }, async () => {
    dirs = await makeDirs();
    const first = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    daemons.push(first);
    await rm(join(dirs.state, "daemon.json"));
    const second = spawnServe(dirs);
    await poll(() => second.exit !== undefined, { what: "the second daemon to exit" });
    expect(second.exit).toBe(1);
    expect(second.err).toContain(`held by pid ${first.process.pid}`);
    expect(lockHolder(dirs).pid).toBe(first.process.pid);
  });
});
