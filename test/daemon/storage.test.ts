import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newOperationId } from "../../src/operations/index.js";
import { BIN, call, envFor, type Dirs } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";
import { canMountTmpfs, TMPFS_BYTES } from "../support/skips.js";
import { alive } from "../support/process.js";

/** Requests sent on the full disk before giving up on seeing a log write fail (each logs an error entry of ~250 bytes). */
const MAX_FULL_DISK_REQUESTS = 100;

/** Whether bubblewrap can give a process a tmpfs of its own here. */

const fixture = daemonFixture();
let bwrap: ChildProcess | undefined;
let confinedPid: number | undefined;

afterEach(async () => {
  if (bwrap && bwrap.exitCode === null && bwrap.signalCode === null) {
    const gone = new Promise((resolve) => bwrap!.once("exit", resolve));
    // The daemon is bwrap's child, not this process's: kill it by pid (bwrap's --die-with-parent covers the rest).
    if (confinedPid !== undefined && alive(confinedPid)) process.kill(confinedPid, "SIGKILL");
    bwrap.kill("SIGKILL");
    await gone;
  }
  bwrap = undefined;
  confinedPid = undefined;
});

interface Confined {
  readonly url: string;
  readonly token: string;
  readonly pid: number;
  /** The state dir as the daemon sees it (its tmpfs), reached through /proc/PID/root. */
  readonly view: string;
  readonly exited: Promise<number | null>;
}

/**
 * Runs `albedo serve` with its state dir on a tmpfs of TMPFS_BYTES that only it (and this test,
 * through /proc/PID/root) can see. `--log-file` in `args` gives it its log; otherwise its stdout
 * and stderr are appended to daemon.log in the state dir, as the notebook launcher used to do.
 */
async function startConfined(target: Dirs, args: readonly string[]): Promise<Confined> {
  const pidFile = join(target.root, "daemon.pid");
  const redirect = args.includes("--log-file") ? "" : ` >>"${join(target.state, "daemon.log")}" 2>&1`;
  const script = `echo $$ > "${pidFile}"; exec "$0" "$@"${redirect}`;
  const argv = ["--die-with-parent", "--dev-bind", "/", "/", "--size", String(TMPFS_BYTES), "--tmpfs", target.state, "--", "sh", "-c", script, process.execPath, BIN, "serve", ...args];
  const child = spawn("bwrap", argv, { env: envFor(target), stdio: "ignore" });
  bwrap = child;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await poll(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), { what: "the confined shell to start" });
  const pid = Number(readFileSync(pidFile, "utf8"));
  confinedPid = pid;
  const view = `/proc/${pid}/root${target.state}`;
  await poll(() => {
    if (child.exitCode !== null) throw new Error(`albedo serve exited with ${child.exitCode}`);
    return existsSync(join(view, "daemon.json"));
  }, { what: "the confined daemon to listen" });
  const info = JSON.parse(readFileSync(join(view, "daemon.json"), "utf8")) as { url: string };
  return { url: info.url, token: readFileSync(join(view, "daemon.token"), "utf8").trim(), pid, view, exited };
}

/** Writes `file` until the filesystem has no byte left (64 KiB chunks, then single bytes for the last page). */
function fill(file: string): void {
  const fd = openSync(file, "w");
  try {
    for (const chunk of [Buffer.alloc(64 * 1024), Buffer.alloc(1)]) {
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const message = (operationId: string) => ({ operation_id: operationId, type: "message", text: "hello" });
const patchGlobal = (daemon: Confined, off: string, revision: string) =>
  call(daemon, "PATCH", "/settings", { scope: "global", skills: { off: [off] } }, { "if-match": `"${revision}"` });

describe.skipIf(!canMountTmpfs())("D-1 B O-1 a full disk answers 507 insufficient_storage, and the daemon recovers when space returns", () => {
  it.each([
    ["its own log (--log-file)", true],
    ["stdout and stderr appended to a file on the full disk (the old launcher)", false],
  ])("with %s: events and settings writes get 507, the log's failed writes are counted, nothing crashes; after the filler is deleted both succeed", async (_name, ownLog) => {
    const { dirs } = fixture;
    const logArgs = ownLog ? ["--log-file", join(dirs.state, "daemon.log")] : [];
    const daemon = await startConfined(dirs, ["--listen", "127.0.0.1:0", "--pool", "0", ...logArgs]);
    const session = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace, kernel: "external", kernel_pid: process.pid });
    expect(session.status).toBe(201);
    const events = `/sessions/${session.body.id}/events`;
    expect((await call(daemon, "POST", events, message(newOperationId()))).status).toBe(202);
    const before = await patchGlobal(daemon, "before", "absent");
    expect(before.status).toBe(200);
    const revision = before.body.revision as string;

    fill(join(daemon.view, "filler"));
    let lastRefused = "";
    let dropped = 0;
    for (let n = 0; n < MAX_FULL_DISK_REQUESTS && dropped === 0; n += 1) {
      lastRefused = newOperationId();
      const refused = await call(daemon, "POST", events, message(lastRefused));
      expect(refused.status).toBe(507);
      expect(refused.headers.get("content-type")).toBe("application/problem+json");
      expect(refused.body).toMatchObject({ code: "insufficient_storage", cause: "SQLITE_FULL", detail: expect.stringContaining("free space") });
      const settings = await patchGlobal(daemon, `full-${n}`, revision);
      expect(settings.body).toMatchObject({ status: 507, code: "insufficient_storage", cause: "ENOSPC" });
      const health = await call(daemon, "GET", "/health");
      expect(health.status).toBe(200);
      dropped = health.body.log.dropped_writes;
    }
    expect(dropped).toBeGreaterThan(0);
    // The lock is the kernel's: its file stays empty whatever the disk refused, and blocks no later writer.
    expect(statSync(join(daemon.view, "settings.lock")).size).toBe(0);

    unlinkSync(join(daemon.view, "filler"));
    // The refused id was never stored: sent again it is admitted, once.
    expect((await call(daemon, "POST", events, message(lastRefused))).status).toBe(202);
    expect((await call(daemon, "POST", events, message(lastRefused))).body.operation_id).toBe(lastRefused);
    const after = await patchGlobal(daemon, "after", revision);
    expect(after.status).toBe(200);
    // None of the refused writes reached the file.
    expect(after.body.settings.skills.off).toEqual(["before", "after"]);

    // Held open, the log outlives the daemon's private tmpfs; its shutdown entry carries the note on what was lost.
    const log = openSync(join(daemon.view, "daemon.log"), "r");
    try {
      process.kill(daemon.pid, "SIGTERM");
      expect(await daemon.exited).toBe(0);
      const text = readFileSync(log, "utf8");
      expect(text).toContain("closing sessions");
      if (ownLog) expect(text).toMatch(/log: \d+ writes failed and were dropped \(last error: ENOSPC\)/);
    } finally {
      closeSync(log);
    }
  }, 60_000);
});
