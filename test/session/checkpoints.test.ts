import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/session/index.js";
import { openSession, run, sessionDirs, sessionsPerTest, type SessionDirs } from "./fixtures.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";

/** Liveness bound for waits in this file: far above the expected time. */
const WAIT_MS = 60_000;

const sessions = sessionsPerTest();

/** The kernel part of `session`'s checkpoint directory. */
function kernelDir(dirs: SessionDirs, session: Session): string {
  return join(dirs.stateDir, "checkpoints", session.id, "kernel");
}

/** Waits for the kernel's checkpoint of the last cell: the manifest lists `name` (or drops it, with `gone`). */
async function checkpointed(dirs: SessionDirs, session: Session, name: string, gone = false): Promise<Record<string, unknown>> {
  const file = join(kernelDir(dirs, session), "manifest.json");
  let manifest: { names: Record<string, unknown>; skipped: Record<string, string> } = { names: {}, skipped: {} };
  await poll(() => {
    try {
      manifest = JSON.parse(readFileSync(file, "utf8")) as typeof manifest;
    } catch {
      return false;
    }
    const listed = name in manifest.names || name in manifest.skipped;
    return gone ? !listed : listed;
  }, { what: `the checkpoint to ${gone ? "drop" : "list"} ${name}`, timeoutMs: WAIT_MS });
  return manifest as unknown as Record<string, unknown>;
}

/** Kills the session's kernel with SIGKILL and waits for the supervisor's restart. */
async function killKernel(session: Session): Promise<void> {
  const pid = session.kernel.pid!;
  process.kill(pid, "SIGKILL");
  await poll(() => session.kernel.pid !== pid && (session.kernel.status === "idle" || session.kernel.status === "ready"), {
    what: "the restarted kernel", timeoutMs: WAIT_MS,
  });
  expect(alive(pid)).toBe(false);
}

describe("K-15 checkpoints come back after kill -9", () => {
  it("restores values, functions, classes and their instances, lambdas, aliased imports and a 50 MB bytes value; reports a socket and an open file lost", async () => {
    const { session, dirs } = await sessions.open();
    await run(session, [
      "import json as js",
      "import os.path as osp",
      "from math import sqrt",
      "K = 3",
      "class Point:",
      "    def __init__(self, x): self.x = x",
      "    def shifted(self): return self.x + K",
      "class Point3(Point): pass",
      "p = Point3(4)",
      "def f(x): return sqrt(x) + K",
      "sq = lambda y: y * y + K",
      "big = b'x' * (50 * 1024 * 1024)",
      "data = {'a': [1, 2, 3]}",
      "import socket",
      "conn = socket.socket()",
      "log = open('log.txt', 'w')",
    ].join("\n"));
    const manifest = await checkpointed(dirs, session, "log");
    expect(manifest.skipped).toMatchObject({ conn: "socket", log: "open file" });
    const before = session.kernel.pid;
    await killKernel(session);
    expect(session.kernel.pid).not.toBe(before);
    const report = session.status().restore;
    expect(report).not.toBeNull();
    expect(report!.trigger).toBe("crash");
    expect([...report!.restored].sort()).toEqual(["K", "Point", "Point3", "big", "data", "f", "js", "osp", "p", "socket", "sq", "sqrt"]);
    expect(report!.lost).toEqual(expect.arrayContaining([{ name: "conn", reason: "socket" }, { name: "log", reason: "open file" }]));
    expect(report!.summary).toMatch(/^restored 12 of 14 names; lost: /);
    const out = await run(session, [
      "print(f(16), sq(2), p.shifted(), isinstance(p, Point3), isinstance(p, Point), len(big), data['a'][2])",
      "print(js.dumps([1]), osp.join('a', 'b'))",
      "K = 10",
      "print(f(16), sq(2), p.shifted())",
    ].join("\n"));
    expect(out).toBe("7.0 7 7 True True 52428800 3\n[1] a/b\n14.0 14 14\n");
  });

  it("writes only the names a cell created or rebound: rebinding one name beside 50 MB does not write the 50 MB again", async () => {
    const { session, dirs } = await sessions.open();
    await run(session, "big = b'y' * (50 * 1024 * 1024)\nsmall = 1");
    await checkpointed(dirs, session, "small");
    const bigFile = join(kernelDir(dirs, session), "values", "big.pkl");
    const written = statSync(bigFile).mtimeMs;
    await run(session, "small = 2\nitems = []");
    await checkpointed(dirs, session, "items");
    const cost = JSON.parse(await run(session, "import albedo\nprint(albedo._checkpoints.last_bytes)")) as number;
    expect(statSync(bigFile).mtimeMs).toBe(written);
    expect(cost).toBeLessThan(1024);
    // A cell that changes a value in place (a method call, a store into it) writes that name again.
    await run(session, "items.append(5)");
    // The next cell begins only once the last one's checkpoint is written.
    await run(session, "pass");
    await killKernel(session);
    expect(await run(session, "print(small, items, len(big))")).toBe("2 [5] 52428800\n");
  });

  it("a cell that changes only IPython's caches (_, _i2, Out) writes no checkpoint, so back-to-back cells wait on no write", async () => {
    const { session, dirs } = await sessions.open();
    await run(session, "kept = 1");
    await checkpointed(dirs, session, "kept");
    await run(session, "pass");
    const manifest = join(kernelDir(dirs, session), "manifest.json");
    const before = readFileSync(manifest, "utf8");
    await run(session, "1 + 1");
    await run(session, "2 + 2");
    await run(session, "pass");
    expect(readFileSync(manifest, "utf8")).toBe(before);
  });

  it("skips a name over MAX_CHECKPOINT_NAME_BYTES and says so; a deleted name is not restored", async () => {
    const { session, dirs } = await sessions.open();
    await run(session, "huge = bytearray(65 * 1024 * 1024)\ngone = 1\nkept = 2\n_private = 3");
    const manifest = await checkpointed(dirs, session, "huge");
    expect((manifest.skipped as Record<string, string>).huge).toMatch(/over the bound: more than 64\.0 MiB per name \(MAX_CHECKPOINT_NAME_BYTES\)/);
    expect((manifest.skipped as Record<string, string>)._private).toMatch(/private/);
    await run(session, "del gone");
    await checkpointed(dirs, session, "gone", true);
    await killKernel(session);
    const report = session.status().restore!;
    expect(report.restored).toEqual(["kept"]);
    expect(report.lost.map((entry) => entry.name).sort()).toEqual(["_private", "huge"]);
    expect(await run(session, "print('gone' in globals(), 'huge' in globals(), kept)")).toBe("False False 2\n");
  });

  it("a checkpoint replaced by a truncated or hostile pickle fails that name only, and the pickle runs inside the sandbox", async () => {
    const { session, dirs } = await sessions.open();
    await run(session, "a = 1\nb = [2]\nc = 'three'");
    await checkpointed(dirs, session, "c");
    const values = join(kernelDir(dirs, session), "values");
    const marker = join(dirs.root, "host-marker");
    // A pickle that, when loaded, writes a file at a host path outside everything the sandbox binds.
    const hostile = `cos\nsystem\n(S'touch ${marker} ; echo hi > ${join(dirs.workspace, "ran-inside")}'\ntR.`;
    writeFileSync(join(values, "a.pkl"), hostile);
    const truncated = readFileSync(join(values, "b.pkl"));
    writeFileSync(join(values, "b.pkl"), truncated.subarray(0, truncated.length - 3));
    await killKernel(session);
    const report = session.status().restore!;
    // The hostile pickle loads (to os.system's exit status); the truncated one fails, alone, with the reason.
    expect([...report.restored].sort()).toEqual(["a", "c"]);
    expect(report.lost).toEqual([{ name: "b", reason: expect.stringMatching(/^failed to load: /) }]);
    // The hostile pickle ran in the kernel's sandbox: the workspace is bound there, the marker's place is not.
    expect(existsSync(join(dirs.workspace, "ran-inside"))).toBe(true);
    expect(existsSync(marker)).toBe(false);
    expect(await run(session, "print(c)")).toBe("three\n");
  });
});

describe("K-15 checkpoints belong to their session", () => {
  it("a second session's kernel cannot read the first's checkpoints; files are 0600 in 0700 directories", async () => {
    const dirs = await sessionDirs();
    let first: Session | undefined;
    let second: Session | undefined;
    try {
      first = await openSession(dirs);
      second = await openSession(dirs);
      expect(second.status().sandbox).toBe("bwrap");
      await run(first, "secret = 'first session'");
      await checkpointed(dirs, first, "secret");
      const own = kernelDir(dirs, first);
      expect(statSync(join(dirs.stateDir, "checkpoints")).mode & 0o777).toBe(0o700);
      expect(statSync(own).mode & 0o777).toBe(0o700);
      expect(statSync(join(own, "values", "secret.pkl")).mode & 0o777).toBe(0o600);
      expect(statSync(join(own, "manifest.json")).mode & 0o777).toBe(0o600);
      const probe = [
        "import os",
        `for path in [${JSON.stringify(own)}, ${JSON.stringify(join(own, "values", "secret.pkl"))}]:`,
        "    try:",
        "        print(path.rsplit('/', 1)[-1], 'listed' if os.path.isdir(path) and os.listdir(path) else open(path, 'rb').read()[:4])",
        "    except OSError as error:",
        "        print(path.rsplit('/', 1)[-1], type(error).__name__)",
        // Only its own checkpoint directory is there: the mount point of its own bind.
        `print(os.listdir(${JSON.stringify(join(dirs.stateDir, "checkpoints"))}), os.environ['ALBEDO_CHECKPOINT_DIR'].split('/')[-2])`,
      ].join("\n");
      const seen = await run(second, probe);
      expect(seen).toBe(`kernel FileNotFoundError\nsecret.pkl FileNotFoundError\n['${second.id}'] ${second.id}\n`);
    } finally {
      await first?.close();
      await second?.close();
      await dirs.cleanup();
    }
  });
});

describe("K-15 restart and resume", () => {
  it("a restart with restore brings the names back; a plain restart starts empty and clears the checkpoint", async () => {
    const { session } = await sessions.open();
    await run(session, "x = 41\ndef g(): return x + 1");
    const report = await session.restart(true);
    expect(report).toMatchObject({ trigger: "restart", restored: ["g", "x"].sort() });
    expect(await run(session, "print(g())")).toBe("42\n");
    expect(await session.restart(false)).toBeUndefined();
    expect(await run(session, "print('x' in globals())")).toBe("False\n");
    const afterPlain = await session.restart(true);
    expect(afterPlain?.restored).toEqual([]);
  });

  it("a closed session is resumed by a new session on the same workspace, with its names", async () => {
    const dirs = await sessionDirs();
    let first: Session | undefined;
    let second: Session | undefined;
    try {
      first = await openSession(dirs);
      await run(first, "answer = 42\nclass A:\n    v = 7\na = A()");
      await checkpointed(dirs, first, "a");
      const id = first.id;
      await first.close();
      expect(readdirSync(join(dirs.stateDir, "checkpoints"))).toContain(id);
      second = await openSession(dirs, { resume: id });
      expect(second.status().restore).toMatchObject({ trigger: "resume", restored: ["A", "a", "answer"] });
      expect(await run(second, "print(answer, a.v, isinstance(a, A))")).toBe("42 7 True\n");
    } finally {
      await first?.close();
      await second?.close();
      await dirs.cleanup();
    }
  });

  it("kernel.checkpoints false writes nothing and a killed kernel comes back empty", async () => {
    const { session, dirs } = await sessions.open(undefined, { checkpoints: false });
    await run(session, "x = 1");
    expect(existsSync(join(dirs.stateDir, "checkpoints", session.id))).toBe(false);
    await killKernel(session);
    expect(session.status()).toMatchObject({ checkpoints: false, restore: null });
    expect(await run(session, "print('x' in globals())")).toBe("False\n");
  });
});
