import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NO_SANDBOX } from "../support/sandbox.js";
import { call, killDaemon, type DaemonProcess, type Dirs } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { writeSkill } from "../support/skills.js";

interface Spare {
  readonly workspace: string;
  readonly skills: boolean;
  readonly state: "booting" | "ready";
  readonly pid: number | null;
}

const fixture = daemonFixture();

async function daemonWith(args: readonly string[] = [], globalSettings?: unknown): Promise<{ dirs: Dirs; daemon: DaemonProcess }> {
  const dirs = await fixture.makeDirs();
  if (globalSettings !== undefined) await writeFile(join(dirs.state, "settings.json"), JSON.stringify(globalSettings), { mode: 0o600 });
  const daemon = await fixture.start(["--listen", "127.0.0.1:0", ...args], undefined, { dirs });
  return { dirs, daemon };
}

async function spares(daemon: DaemonProcess): Promise<Spare[]> {
  return (await call(daemon, "GET", "/health")).body.spares as Spare[];
}

/** Waits until the pool holds exactly one ready spare, for `workspace`; returns it. */
async function readySpare(daemon: DaemonProcess, workspace: string): Promise<Spare> {
  let found: Spare | undefined;
  await poll(async () => {
    const list = await spares(daemon);
    found = list.length === 1 && list[0]!.workspace === workspace && list[0]!.state === "ready" ? list[0] : undefined;
    return found !== undefined;
  }, { what: `a ready spare kernel for ${workspace}` });
  return found!;
}

async function open(daemon: DaemonProcess, workspace: string, extensions?: { skills: boolean }) {
  const created = await call(daemon, "POST", "/sessions", { workspace, ...(extensions ? { extensions } : {}) });
  expect(created.status).toBe(201);
  return created.body as { id: string; kernel: { pid: number; warm: boolean } };
}

describe("K-11 warm start from the daemon's kernel pool", () => {
  it("boots a spare after an open; the next open for that workspace takes it, reloaded, and a new spare follows", async () => {
    const { dirs, daemon } = await daemonWith();
    writeSkill(join(dirs.workspace, ".agents", "skills"), "early");
    const first = await open(daemon, dirs.workspace);
    expect(first.kernel.warm).toBe(false);
    const spare = await readySpare(daemon, dirs.workspace);
    expect(spare).toMatchObject({ skills: true, state: "ready" });
    expect(spare.pid).not.toBe(first.kernel.pid);

    // Written after the spare booted: taking the spare must reload it.
    writeSkill(join(dirs.workspace, ".agents", "skills"), "late");
    const second = await open(daemon, dirs.workspace);
    expect(second.kernel).toMatchObject({ warm: true, pid: spare.pid });
    const listed = await call(daemon, "POST", `/sessions/${second.id}/execute`, { code: "print(sorted(s['name'] for s in (await skills.list())['skills'] if s['name'] in ('early', 'late')))" });
    expect(listed.body).toMatchObject({ status: "ok", outputs: [{ msg_type: "stream", content: { text: "['early', 'late']\n" } }] });

    const next = await readySpare(daemon, dirs.workspace);
    expect([first.kernel.pid, second.kernel.pid]).not.toContain(next.pid);
    await killDaemon(daemon, "SIGTERM");
    for (const pid of [first.kernel.pid, second.kernel.pid, next.pid!]) expect(alive(pid)).toBe(false);
  });

  it("does not hand out a spare whose sandbox would now be built differently: settings changed, or a user skill linked outside the roots", async () => {
    const { dirs, daemon } = await daemonWith();
    await open(daemon, dirs.workspace);
    const first = await readySpare(daemon, dirs.workspace);
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ limits: { openFiles: 512 } }), { mode: 0o600 });
    expect((await open(daemon, dirs.workspace)).kernel.warm).toBe(false);
    await poll(() => !alive(first.pid!), { what: "the outdated spare kernel to exit" });

    // A workspace link to a skill elsewhere is never bound into a sandbox (the kernel could have planted it): the spare still fits.
    const second = await readySpare(daemon, dirs.workspace);
    const store = writeSkill(join(dirs.root, "store"), "linked");
    await mkdir(join(dirs.workspace, ".agents", "skills"), { recursive: true });
    await symlink(store, join(dirs.workspace, ".agents", "skills", "linked"));
    expect((await open(daemon, dirs.workspace)).kernel).toMatchObject({ warm: true, pid: second.pid });

    // A user skill linked elsewhere is bound: a spare booted before it would lack the mount. Without a
    // sandbox there are no mounts, so nothing about the spare is outdated.
    if (NO_SANDBOX) return;
    const third = await readySpare(daemon, dirs.workspace);
    const userStore = writeSkill(join(dirs.root, "user-store"), "user-linked");
    await mkdir(join(dirs.home, ".agents", "skills"), { recursive: true });
    await symlink(userStore, join(dirs.home, ".agents", "skills", "user-linked"));
    expect((await open(daemon, dirs.workspace)).kernel.warm).toBe(false);
    await poll(() => !alive(third.pid!), { what: "the outdated spare kernel to exit" });
  });

  it("keeps at most kernel.pool spares: another workspace's open closes the older spare", async () => {
    const { dirs, daemon } = await daemonWith([], { kernel: { pool: 1 } });
    const other = join(dirs.root, "other");
    await mkdir(other);
    await open(daemon, dirs.workspace);
    const old = await readySpare(daemon, dirs.workspace);
    await open(daemon, other);
    await readySpare(daemon, other);
    await poll(() => !alive(old.pid!), { what: "the older spare kernel to exit" });
    // A different extension set is another kind of session: it gets no spare booted for skills on.
    expect((await open(daemon, other, { skills: false })).kernel.warm).toBe(false);
  });

  it("keeps no spare with --pool 0 or kernel.pool 0, and refuses a bad --pool", async () => {
    for (const setup of [{ args: ["--pool", "0"] }, { args: [], settings: { kernel: { pool: 0 } } }]) {
      const { dirs, daemon } = await daemonWith(setup.args, setup.settings);
      await open(daemon, dirs.workspace);
      expect((await open(daemon, dirs.workspace)).kernel.warm).toBe(false);
      expect(await spares(daemon)).toEqual([]);
    }
    await expect(fixture.start(["--pool", "9"])).rejects.toThrow(/--pool takes a whole number from 0 to 8/);
  });
});
