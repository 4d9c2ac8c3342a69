/**
 * The attacks an adversarial probe used to widen a sandbox, replayed from inside real sandboxed
 * kernels of a real daemon: links planted toward the state dir and the home (before open, after
 * open, before a restart, in a warm spare's workspace), renames around the read-only skill dirs,
 * and absolute links as workspace skill roots.
 */
import { mkdir, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { newOperationId } from "../../src/operations/index.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { poll } from "../support/poll.js";
import { writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

let dirs: Dirs;
let daemon: DaemonProcess;
/** A shared skills install outside /tmp, the home and the state dir (as /nix/store would be). */
const sharedDirs = tempDirs("albedo-shared-", "/var/tmp");
let shared: string;

beforeAll(async () => {
  if (NO_SANDBOX) return;
  dirs = await makeDirs();
  shared = sharedDirs.make();
  writeSkill(shared, "shared-skill", { body: "Shared instructions.\n" });
  await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ sandbox: "required" }), { mode: 0o600 });
  writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
  await mkdir(join(dirs.home, ".ssh", "keys"), { recursive: true, mode: 0o700 });
  await writeFile(join(dirs.home, ".ssh", "id_ed25519"), "PRIVATE KEY\n", { mode: 0o600 });
  // Shaped like a skill, so a root linked to ~/.ssh puts it in the catalog and the guard must refuse it.
  await writeFile(join(dirs.home, ".ssh", "keys", "SKILL.md"), "---\nname: keys\ndescription: Not a skill.\n---\nsecret body\n");
  await writeFile(join(dirs.home, ".ssh", "keys", "id"), "PRIVATE KEY\n", { mode: 0o600 });
  daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
});

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
  sharedDirs.cleanup();
});

/** Opens a session on `workspace` (a new dir under the test root unless given); returns its id. */
async function open(on: DaemonProcess, workspace: string): Promise<string> {
  const created = await call(on, "POST", "/sessions", { workspace });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id as string;
}

async function newWorkspace(name: string): Promise<string> {
  const workspace = join(dirs.root, name);
  await mkdir(workspace);
  return workspace;
}

/** Runs `code` in the session's kernel and returns its stdout; fails on a Python error. */
async function py(on: DaemonProcess, id: string, code: string): Promise<string> {
  const answer = await call(on, "POST", `/sessions/${id}/execute`, { code });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const outputs = answer.body.outputs as { msg_type: string; content: { name?: string; text?: string; ename?: string; evalue?: string } }[];
  const error = outputs.find((o) => o.msg_type === "error");
  if (error) throw new Error(`cell failed: ${error.content.ename}: ${error.content.evalue}`);
  return outputs.filter((o) => o.msg_type === "stream" && o.content.name === "stdout").map((o) => o.content.text).join("");
}

/**
 * Python that prints what the kernel can see of the state dir, of every other session's run dir
 * (`runDirs` lists them all; the kernel's own is left out by name) and of the home's secrets.
 */
function probe(state: string, runDirs: readonly string[]): string {
  return [
    "import os, json, socket",
    "def tryit(fn):",
    "    try: return fn()",
    "    except Exception as e: return type(e).__name__",
    "def connect(p):",
    "    s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(p); s.close(); return 'connected'",
    `S = ${JSON.stringify(state)}`,
    "own = os.path.basename(os.path.dirname(os.environ['ALBEDO_RPC_ENDPOINT'][len('ipc://'):]))",
    `others = [d for d in ${JSON.stringify(runDirs)} if os.path.basename(d) != own]`,
    "print(json.dumps({'own': own, 'runs': tryit(lambda: sorted(os.listdir(os.path.join(S, 'run')))),",
    "       'token': tryit(lambda: open(os.path.join(S, 'daemon.token')).read()),",
    `       'ssh': tryit(lambda: open(${JSON.stringify(join("HOME", ".ssh", "id_ed25519"))}.replace('HOME', os.environ['HOME'])).read()),`,
    "       'others': [tryit(lambda d=d: os.listdir(d)) for d in others],",
    "       'sockets': [tryit(lambda d=d: connect(os.path.join(d, 'rpc'))) for d in others],",
    "       'links': tryit(lambda: sorted(os.listdir('.albedo/skills')))}))",
  ].join("\n");
}

interface Seen {
  own: string;
  runs: string[] | string;
  token: string;
  ssh: string;
  others: string[];
  sockets: string[];
  links: string[] | string;
}

/** Every session run dir of the state dir, as paths. */
async function runDirs(state: string): Promise<string[]> {
  return (await readdir(join(state, "run"))).sort().map((name) => join(state, "run", name));
}

/** What a contained kernel sees: its own run dir only, no token, no key, no other session's files or sockets. */
function expectContained(seen: Seen, others: number): void {
  expect(seen.runs).toEqual([seen.own]);
  expect(seen.token).toBe("FileNotFoundError");
  expect(seen.ssh).toBe("FileNotFoundError");
  expect(seen.others).toEqual(Array.from({ length: others }, () => "FileNotFoundError"));
  expect(seen.sockets).toEqual(Array.from({ length: others }, () => "FileNotFoundError"));
}

async function kernelOf(id: string): Promise<{ status: string; pid: number | null; sandbox_notes: string[] }> {
  return (await call(daemon, "GET", `/sessions/${id}`)).body.kernel;
}

describe.skipIf(NO_SANDBOX)("K-10 K-6 planted skill-root links never widen a sandbox (real daemon, real sandboxed kernels)", () => {
  it("after open: the kernel cannot plant a link, rename or replace the workspace's skill dirs, or shadow a skill", async () => {
    const id = await open(daemon, dirs.workspace);
    const out = await py(daemon, id, [
      "import os, shutil",
      "def tryit(fn):",
      "    try: fn(); return 'ALLOWED'",
      "    except OSError as e: return e.strerror",
      "print(tryit(lambda: os.symlink('../../state/run', '.albedo/skills')))",
      "print(tryit(lambda: os.rename('.agents', '.agents_moved')))",
      "print(tryit(lambda: os.rename('.albedo', '.albedo_moved')))",
      "print(tryit(lambda: os.rename('.agents/skills', '.agents/old')))",
      "print(tryit(lambda: open('.agents/skills/demo/SKILL.md', 'w').write('---\\nname: demo\\ndescription: PLANTED\\n---\\n')))",
      "print(tryit(lambda: shutil.rmtree('.agents')))",
      "print(tryit(lambda: os.makedirs('.albedo/skills/demo')))",
    ].join("\n"));
    expect(out.trim().split("\n")).toEqual([
      "Read-only file system", "Device or resource busy", "Device or resource busy", "Read-only file system",
      "Read-only file system", "Read-only file system", "Read-only file system",
    ]);
    const later = await open(daemon, dirs.workspace);
    expect(await py(daemon, later, "print((await commands.demo('x'))['description'])")).toBe("The demo skill.\n");
    await call(daemon, "DELETE", `/sessions/${later}`);
    await call(daemon, "DELETE", `/sessions/${id}`);
  });

  it("before a restart: a link planted toward the state dir's run dirs is not mounted when the kernel comes back", async () => {
    const victims = [await open(daemon, dirs.workspace), await open(daemon, dirs.workspace)];
    const attacker = await open(daemon, dirs.workspace);
    await py(daemon, victims[0]!, "secret_variable = 'victim data'");
    const before = await kernelOf(attacker);
    // The kernel itself cannot write here any more (the test above); plant as an unsandboxed process could have.
    await symlink("../../state/run", join(dirs.workspace, ".albedo", "skills"));
    try {
      await call(daemon, "POST", `/sessions/${attacker}/execute`, { code: "import os, signal; os.kill(os.getpid(), signal.SIGKILL)" });
      await poll(async () => {
        const now = await kernelOf(attacker);
        return now.pid !== before.pid && now.pid !== null && (now.status === "idle" || now.status === "ready");
      }, { what: "the attacker's kernel to restart" });
      const all = await runDirs(dirs.state);
      expect(all).toHaveLength(3);
      const seen = JSON.parse(await py(daemon, attacker, probe(dirs.state, all))) as Seen;
      expectContained(seen, 2);
      // The planted link resolves inside the sandbox, to the hidden state dir's view: the kernel's own run dir only.
      expect(seen.links).toEqual([seen.own]);
      expect(await py(daemon, victims[0]!, "print(secret_variable)")).toBe("victim data\n");
    } finally {
      await rm(join(dirs.workspace, ".albedo", "skills"));
      for (const id of [...victims, attacker]) await call(daemon, "DELETE", `/sessions/${id}`);
    }
  });

  it("before open: links toward the run dirs and ~/.ssh expose nothing, and the runtime refuses to serve what is behind them", async () => {
    const workspace = await newWorkspace("planted-before-open");
    await mkdir(join(workspace, ".agents"));
    await mkdir(join(workspace, ".albedo"));
    await symlink(relative(join(workspace, ".albedo"), join(dirs.state, "run")), join(workspace, ".albedo", "skills"));
    await symlink(relative(join(workspace, ".agents"), join(dirs.home, ".ssh")), join(workspace, ".agents", "skills"));
    const neighbour = await open(daemon, dirs.workspace);
    const id = await open(daemon, workspace);
    const seen = JSON.parse(await py(daemon, id, probe(dirs.state, await runDirs(dirs.state)))) as Seen;
    expectContained(seen, 1);
    expect(seen.links).toEqual([seen.own]);
    const through = await py(daemon, id, [
      "import os, albedo",
      "def tryit(fn):",
      "    try: return fn()",
      "    except Exception as e: return type(e).__name__",
      "print(tryit(lambda: open('.agents/skills/id_ed25519').read()))",
      "try:\n    await skills.read('keys', 'id')\n    print('LEAKED')\nexcept albedo.Forbidden:\n    print('forbidden')",
      "try:\n    await commands.invoke('/keys', 'x')\n    print('LEAKED')\nexcept albedo.Forbidden:\n    print('forbidden')",
    ].join("\n"));
    expect(through.trim().split("\n")).toEqual(["FileNotFoundError", "forbidden", "forbidden"]);
    // A user slash activation goes through the same guard (the session's one skill-access object).
    const event = await call(daemon, "POST", `/sessions/${id}/events`, { operation_id: newOperationId(), type: "command", command: "/keys", arguments: "x" });
    expect(event.status).toBe(403);
    expect(JSON.stringify(event.body)).not.toContain("secret body");
    const notes = (await kernelOf(id)).sandbox_notes.join("\n");
    expect(notes).toMatch(/\.agents\/skills: workspace skill root not exposed in the sandbox: a link the kernel can rewrite leads outside the workspace/);
    expect(notes).toMatch(/\.albedo\/skills: workspace skill root not exposed in the sandbox: .*run dirs/);
    for (const session of [id, neighbour]) await call(daemon, "DELETE", `/sessions/${session}`);
  });

  it("an absolute or relative link to a shared install as a workspace skill root opens fine (no bind of its target); its skills are served over RPC", async () => {
    for (const [name, target] of [["absolute-root", join(shared)], ["relative-root", ""]] as const) {
      const workspace = await newWorkspace(name);
      await mkdir(join(workspace, ".agents"));
      await symlink(target || relative(join(workspace, ".agents"), shared), join(workspace, ".agents", "skills"));
      const id = await open(daemon, workspace);
      const out = await py(daemon, id, [
        "print((await skills.read('shared-skill'))['content'].splitlines()[-1])",
        "print((await commands.invoke('/shared-skill', 'x'))['instructions'])",
      ].join("\n"));
      expect(out).toBe("Shared instructions.\nShared instructions.\n");
      expect((await kernelOf(id)).sandbox_notes.join("\n")).toMatch(/leads outside the workspace/);
      await call(daemon, "DELETE", `/sessions/${id}`);
    }
  });
});

describe.skipIf(NO_SANDBOX)("K-10 K-11 a link planted in a warm spare's workspace", () => {
  const fixture = daemonFixture();

  it("the spare's sandbox was pinned before the link: whether the next open takes it or boots cold, the kernel sees no run dir but its own", async () => {
    const other = fixture.dirs;
    await writeFile(join(other.state, "settings.json"), JSON.stringify({ sandbox: "required" }), { mode: 0o600 });
    const pooled = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "1"]);
    const workspace = await newWorkspace("warm");
    const first = await open(pooled, workspace);
    await poll(async () => ((await call(pooled, "GET", "/health")).body.spares as { state: string }[]).some((s) => s.state === "ready"), { what: "a ready spare" });
    await symlink(relative(join(workspace, ".albedo"), join(other.state, "run")), join(workspace, ".albedo", "skills"));
    const second = await open(pooled, workspace);
    const all = await runDirs(other.state);
    const seen = JSON.parse(await py(pooled, second, probe(other.state, all))) as Seen;
    expectContained(seen, all.length - 1);
    expect(seen.links).toEqual([seen.own]);
    for (const id of [first, second]) await call(pooled, "DELETE", `/sessions/${id}`);
  });
});
