import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, call, envFor, killDaemon, makeDirs, startDaemon, waitFor, type DaemonProcess, type Dirs } from "./support/daemon.js";

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
  const child = spawn(process.execPath, [BIN, "serve", "--listen", "127.0.0.1:0"], { env: envFor(target), stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const serve: Serve = { child, out: "", err: "", exit: undefined };
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (serve.out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (serve.err += chunk));
  child.on("exit", (code) => (serve.exit = code));
  return serve;
}

const listening = (serve: Serve) => /listening on (\S+)/.exec(serve.out)?.[1];

describe("D-1 one daemon per state dir", () => {
  it("of two concurrent `albedo serve`, exactly one listens and the other exits 1; a kill -9 leaves a stale lock the next start replaces", { timeout: 120_000 }, async () => {
    dirs = await makeDirs();
    const both = [spawnServe(dirs), spawnServe(dirs)];
    await waitFor(() => both.every((serve) => listening(serve) !== undefined || serve.exit !== undefined), "both to listen or exit");
    const winners = both.filter((serve) => serve.exit === undefined);
    const losers = both.filter((serve) => serve.exit !== undefined);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect(losers[0]!.exit).toBe(1);
    expect(losers[0]!.err).toContain("already runs");
    const winner = winners[0]!;
    const token = readFileSync(join(dirs.state, "daemon.token"), "utf8").trim();
    expect((await call({ url: listening(winner)!, token }, "GET", "/health")).body).toMatchObject({ ok: true, pid: winner.child.pid });
    expect(readFileSync(join(dirs.state, "daemon.lock"), "utf8").trim()).toBe(String(winner.child.pid));

    const gone = new Promise((resolve) => winner.child.once("exit", resolve));
    winner.child.kill("SIGKILL");
    await gone;
    expect(existsSync(join(dirs.state, "daemon.lock"))).toBe(true);
    const next = await startDaemon(dirs);
    daemons.push(next);
    expect(readFileSync(join(dirs.state, "daemon.lock"), "utf8").trim()).toBe(String(next.process.pid));
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
