/**
 * albedo run in the home with the default state dir: the workspace then contains the state dir.
 * Sessions open for `albedo exec`, the daemon and the in-process runtime, the kernel works in the
 * home, and the state dir stays hidden: from the sandboxed kernel, from the runtime-served skill
 * reads, and from the model's `read` tool. The global settings are not read again as project ones.
 */
import { mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, killDaemon, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { installDir } from "../../src/platform/index.js";
import type { Session } from "../../src/session/index.js";
import { loadPrompts } from "../../src/turns/context.js";
import { EMPTY_CONVERSATION } from "../../src/turns/conversation.js";
import { runTurn } from "../../src/turns/runner.js";
import { startFakeOpenAI, type FakeOpenAI } from "../model/fakeOpenAI.js";
import { openaiAdapter } from "../model/support.js";
import { openSession, run, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { runAlbedo } from "../support/cli.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { roots, writeSkill } from "../support/skills.js";

let dirs: SessionDirs;
let home: string;
let stateDir: string;

/** Python printing, as JSON, what the kernel sees of the state dir inside the home. */
const PROBE = [
  "import os, json",
  "def tryit(fn):",
  "    try: return fn()",
  "    except Exception as e: return type(e).__name__",
  "S = os.path.join(os.environ['HOME'], '.albedo')",
  "open('made-in-home.txt', 'w').write('kernel wrote this')",
  "print(json.dumps({'cwd': os.getcwd(), 'state': tryit(lambda: sorted(os.listdir(S))),",
  "  'runs': tryit(lambda: len(os.listdir(os.path.join(S, 'run')))), 'checkpoints': tryit(lambda: len(os.listdir(os.path.join(S, 'checkpoints')))),",
  "  'packages': tryit(lambda: len(os.listdir(os.path.join(S, 'packages')))),",
  "  'settings': tryit(lambda: open(os.path.join(S, 'settings.json')).read()),",
  "  'token': tryit(lambda: open(os.path.join(S, 'daemon.token')).read()),",
  "  'db': tryit(lambda: open(os.path.join(S, 'albedo.db'), 'rb').read(16))}))",
].join("\n");

interface Seen {
  readonly cwd: string;
  readonly state: string[] | string;
  readonly runs: number | string;
  readonly checkpoints: number | string;
  readonly packages: number | string;
  readonly settings: string;
  readonly token: string;
  readonly db: string;
}

function seenOf(stdout: string): Seen {
  return JSON.parse(stdout.split("\n").find((line) => line.startsWith("{"))!) as Seen;
}

/** The kernel worked in the home and saw nothing of the state dir but its own run dir, its own checkpoint directory and its workspace's package layer. */
function expectHidden(seen: Seen): void {
  expect(seen.cwd).toBe(home);
  expect(seen.state).toEqual(["checkpoints", "packages", "run"]);
  expect(seen.runs).toBe(1);
  expect(seen.checkpoints).toBe(1);
  expect(seen.packages).toBe(1);
  expect([seen.settings, seen.token, seen.db]).toEqual(["FileNotFoundError", "FileNotFoundError", "FileNotFoundError"]);
}

beforeAll(async () => {
  if (NO_SANDBOX) return;
  dirs = await sessionDirs();
  home = dirs.home;
  stateDir = join(home, ".albedo");
  await mkdir(stateDir, { mode: 0o700 });
  // `skills.default` is allowed only in the global scope: read again as project settings it would fail every open.
  await writeFile(join(stateDir, "settings.json"), JSON.stringify({ sandbox: "required", skills: { default: "on" } }), { mode: 0o600 });
  await writeFile(join(stateDir, "daemon.token"), "not-for-kernels\n", { mode: 0o600 });
  const skill = writeSkill(roots.homeAgents(home), "home-skill");
  // A resource link the user laid toward the state dir: the sandbox hides its target, so the runtime must not serve it either.
  await symlink(join(stateDir, "daemon.token"), join(skill, "token.txt"));
});

afterAll(async () => {
  await dirs?.cleanup();
});

/** The environment of a person in their home: no ALBEDO_HOME, so the state dir is ~/.albedo. */
function homeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env.ALBEDO_HOME;
  return env;
}

describe.skipIf(NO_SANDBOX)("K-10 D-2 a workspace that contains the state dir (albedo run in the home)", () => {
  it("albedo exec in the home runs sandboxed with the state dir hidden", async () => {
    const ran = await runAlbedo(["exec", "-c", PROBE], { cwd: home, env: homeEnv() });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toMatch(/not exposed/);
    expectHidden(seenOf(ran.stdout));
    expect(await readdir(home)).toContain("made-in-home.txt");
  });

  it("a daemon session on the home: 201, the state dir hidden, the global settings read once", async () => {
    const daemonDirs: Dirs = { root: dirs.root, workspace: home, home, state: stateDir, cleanup: () => Promise.resolve() };
    const daemon: DaemonProcess = await startDaemon(daemonDirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    try {
      const created = await call(daemon, "POST", "/sessions", { workspace: home });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = created.body.id as string;
      expect(created.body.kernel.sandbox).toBe("bwrap");
      const answer = await call(daemon, "POST", `/sessions/${id}/execute`, { code: PROBE });
      const stdout = (answer.body.outputs as { msg_type: string; content: { text?: string } }[]).map((o) => o.content.text ?? "").join("");
      expectHidden(seenOf(stdout));
      const settings = await call(daemon, "GET", `/settings?workspace=${encodeURIComponent(home)}`);
      expect(settings.body.global.settings.skills).toEqual({ default: "on" });
      expect(settings.body.project.settings).toEqual({});
      const project = await call(daemon, "PATCH", "/settings", { scope: "project", workspace: home, skills: { off: ["home-skill"] } }, { "if-match": '"absent"' });
      expect(project.status).toBe(400);
      expect(project.body.detail).toMatch(/is the global settings file; change the global scope instead/);
      await call(daemon, "DELETE", `/sessions/${id}`);
    } finally {
      await killDaemon(daemon, "SIGTERM");
    }
  });
});

describe.skipIf(NO_SANDBOX)("K-10 O-5 the runtime never serves the state dir inside a home workspace", () => {
  let session: Session;
  let server: FakeOpenAI;

  beforeAll(async () => {
    const inHome: SessionDirs = { ...dirs, workspace: home, stateDir };
    session = await openSession(inHome, { env: homeEnv() });
    server = await startFakeOpenAI();
  });

  afterAll(async () => {
    await session?.close();
    await server?.close();
  });

  it("the kernel sees the home, and its skills; the read tool refuses the state dir and reads the rest of the home", async () => {
    expectHidden(seenOf(await run(session, PROBE)));
    expect(await run(session, "print([s['name'] for s in (await skills.list())['skills'] if s['name'] == 'home-skill'])")).toBe("['home-skill']\n");
    const token = "try:\n    await skills.read('home-skill', 'token.txt')\nexcept Exception as e:\n    print(type(e).__name__, e)";
    expect(await run(session, token)).toMatch(/^Forbidden \[forbidden\] resource "token\.txt"/);
    const adapter = await openaiAdapter(server);
    server.enqueue(
      { kind: "reply", toolCalls: [
        { id: "a", name: "read", arguments: JSON.stringify({ path: ".albedo/daemon.token" }) },
        { id: "b", name: "read", arguments: JSON.stringify({ path: join(stateDir, "settings.json") }) },
        { id: "c", name: "read", arguments: JSON.stringify({ path: "made-in-home.txt" }) },
      ] },
      { kind: "reply", text: "ok" },
    );
    await runTurn(
      { turnId: "t-home", visibleText: "read", modelInput: "read" },
      EMPTY_CONVERSATION,
      { adapter, mode: "tool", contextTokens: 32_768, prompts: loadPrompts(installDir()), host: session, emit: () => undefined },
      new AbortController().signal,
    );
    const results = (server.requests[1]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool").map((m) => m.content);
    expect(results[0]).toMatch(/^Refused: .* is in albedo's state dir/);
    expect(results[1]).toMatch(/^Refused: .* is in albedo's state dir/);
    expect(results[2]).toContain("kernel wrote this");
  });
});
