/**
 * Real files, sockets and processes for the sandbox tests: a fake home with a state dir, two
 * sessions' run dirs, a workspace and skill roots (one linked), plus a runner that starts
 * Python inside a sandbox and always reaps it.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { type ExposureRequest, type SandboxProfile, type Wrap } from "../../src/sandbox/index.js";
import { childPids } from "../../src/sandbox/pids.js";
import { installDir } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { writeSkill } from "../support/skills.js";
import { tempDir } from "../support/tempDirs.js";

/** The managed environment's interpreter of this checkout. */
export const PYTHON = join(installDir(), ".venv", "bin", "python");
/** Upper bound on one sandboxed Python run; it is killed past this. */
export const RUN_TIMEOUT_MS = 30_000;

export interface Tree {
  readonly base: string;
  readonly home: string;
  readonly stateDir: string;
  readonly runDir: string;
  readonly otherRunDir: string;
  readonly workspace: string;
  /** `<home>/.agents/skills`, a symlink to a directory outside the home. */
  readonly linkedRoot: string;
  /** A skill directory outside every root that a workspace skill links to. */
  readonly linkedSkillTarget: string;
  /** A file beside the linked skill target that nothing exposes. */
  readonly unexposedFile: string;
  /** Deletes the whole tree. */
  remove(): void;
}

/** Builds the fixture tree under a new temp dir. */
export function makeTree(): Tree {
  const { dir: base, remove } = tempDir("albedo-sandbox-");
  const home = join(base, "home");
  const stateDir = join(home, ".albedo");
  const runDir = join(stateDir, "run", "sess-a");
  const otherRunDir = join(stateDir, "run", "sess-b");
  for (const dir of [runDir, otherRunDir]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(stateDir, "daemon.token"), "secret-token\n", { mode: 0o600 });
  writeFileSync(join(stateDir, "settings.json"), '{"sandbox":"auto"}\n', { mode: 0o600 });
  writeFileSync(join(otherRunDir, "kernel.json"), "{}\n");
  mkdirSync(join(home, ".ssh"), { mode: 0o700 });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n", { mode: 0o600 });
  const workspace = join(home, "project");
  mkdirSync(join(workspace, ".agents", "skills"), { recursive: true });
  writeFileSync(join(workspace, "data.txt"), "workspace data\n");
  const shared = join(base, "shared", "skills");
  writeSkill(shared, "demo");
  mkdirSync(join(home, ".agents"));
  const linkedRoot = join(home, ".agents", "skills");
  symlinkSync(shared, linkedRoot);
  const linkedSkillTarget = writeSkill(join(base, "elsewhere"), "linked");
  const unexposedFile = join(base, "elsewhere", "secret.txt");
  writeFileSync(unexposedFile, "not for the kernel\n");
  symlinkSync(linkedSkillTarget, join(workspace, ".agents", "skills", "linked"));
  chmodSync(stateDir, 0o700);
  return { base, home, stateDir, runDir, otherRunDir, workspace, linkedRoot, linkedSkillTarget, unexposedFile, remove };
}

/** The read-only requests a session makes for `tree`: the interpreter, a workspace root, a linked user root and a linked workspace skill. */
export function requestsOf(tree: Tree, pythonPaths: readonly string[]): ExposureRequest[] {
  return [
    ...pythonPaths.map((path) => ({ path, kind: "ro" as const, what: "Python install" })),
    { path: join(tree.workspace, ".agents", "skills"), kind: "ro", what: "workspace skill root" },
    { path: tree.linkedRoot, kind: "ro", what: "user skill root", userRoot: tree.linkedRoot },
    { path: join(tree.workspace, ".agents", "skills", "linked"), kind: "ro", what: "skill linked", atRealPathOnly: true },
  ];
}

/** The profile of session A over `tree`. */
export function profileOf(tree: Tree, pythonPaths: readonly string[], extra: Partial<SandboxProfile> = {}): SandboxProfile {
  return {
    workspace: tree.workspace,
    runDir: tree.runDir,
    stateDir: tree.stateDir,
    home: tree.home,
    readOnly: requestsOf(tree, pythonPaths),
    ...extra,
  };
}

/** Spawns what `wrap` makes of `argv` (argv itself without a wrapper), handing over its descriptors, feed and environment, as the kernel launcher does. */
export function spawnWrapped(wrap: Wrap | undefined, argv: string[], stdin: "ignore" | "pipe", spawnEnv: Record<string, string | undefined> = process.env): ChildProcess {
  const launch = wrap ? wrap({ argv, env: spawnEnv, connection: "{}\n" }) : { argv, fds: [] as number[], feed: undefined, env: undefined };
  const stdio: StdioOptions = [stdin, "pipe", "pipe", ...launch.fds, ...(launch.feed === undefined ? [] : ["pipe" as const])];
  const child = spawn(launch.argv[0]!, launch.argv.slice(1), { stdio, env: launch.env ?? spawnEnv });
  if (launch.feed !== undefined) (child.stdio[3 + launch.fds.length] as Writable).end(launch.feed);
  return child;
}

/** A Unix socket server (another session's IPC endpoint) and a loopback TCP server. */
export async function listen(server: Server, where: string | { port: 0; host: string }): Promise<Server> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if (typeof where === "string") server.listen(where, resolve);
    else server.listen(where.port, where.host, resolve);
  });
  return server;
}

export function newServer(): Server {
  return createServer((socket) => {
    // Probes close at once; a reset while greeting them is expected, not a test failure.
    socket.on("error", () => undefined);
    socket.end("hello\n");
  });
}

export async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `python -c code` through `wrap` and waits for it; kills it at RUN_TIMEOUT_MS. */
export async function runPython(wrap: Wrap | undefined, code: string, spawnEnv?: Record<string, string>): Promise<RunResult> {
  return await collect(spawnWrapped(wrap, [PYTHON, "-c", code], "ignore", spawnEnv));
}

/** Waits for `child` (spawned with piped stdout and stderr), collecting both; kills it at RUN_TIMEOUT_MS. */
export async function collect(child: ChildProcess): Promise<RunResult> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
  const [code_, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on("close", (c, s) => resolve([c, s])),
  );
  clearTimeout(timer);
  return { code: code_, signal, stdout, stderr };
}

/** Every descendant pid of `pid`, from /proc. */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of childPids(queue.shift()!)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

export interface Started {
  readonly child: ChildProcess;
  /** Resolves with the first stdout line (rejects if the process ends first). */
  readonly firstLine: Promise<string>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** Starts `python -c code` through `wrap` without waiting for it; the caller must end it. */
export function startPython(wrap: Wrap | undefined, code: string): Started {
  const child = spawnWrapped(wrap, [PYTHON, "-c", code], "pipe");
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])));
  const firstLine = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const end = out.indexOf("\n");
      if (end >= 0) resolve(out.slice(0, end));
    });
    void exited.then(([c, s]) => reject(new Error(`exited (${String(c ?? s)}) before a line: ${stderr}`)));
  });
  return { child, firstLine, exited };
}

/** SIGKILLs the spawned bwrap and waits until it and every process it had started are gone; throws after `timeoutMs`. */
export async function killTree(started: { readonly child: ChildProcess; readonly exited: Promise<unknown> }, timeoutMs = 10_000): Promise<void> {
  const pid = started.child.pid!;
  const tree = [pid, ...descendants(pid)];
  started.child.kill("SIGKILL");
  await started.exited;
  await poll(() => tree.every((p) => !alive(p)), { what: "the sandboxed process tree to be gone", timeoutMs });
}
