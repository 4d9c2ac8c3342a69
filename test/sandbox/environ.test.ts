/**
 * The host's environment stays outside the sandbox: secrets planted in the environment of the
 * process that starts kernels (`albedo exec`, a daemon) are looked for in every /proc entry a
 * sandboxed kernel can read — each process's environ and cmdline, each thread's, and the kernel's
 * own — for a kernel of `albedo exec`, a daemon session, a warm spare and a restarted kernel.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { runAlbedo } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { NO_SANDBOX } from "../support/sandbox.js";

/** Values no kernel may see, under names a host really carries; one also under an ALBEDO_ name. */
const SECRETS: Readonly<Record<string, string>> = {
  AWS_SECRET_ACCESS_KEY: "aws-planted-3f1c",
  GITHUB_TOKEN: "ghp-planted-9a7e",
  JUPYTER_TOKEN: "jt-planted-51d0",
  ANTHROPIC_API_KEY: "sk-ant-planted-77b2",
  OPENAI_API_KEY: "sk-planted-c4e8",
  ALBEDO_PRIVATE_NOTE: "albedo-planted-0d6a",
};

/** Python printing, as JSON, every readable /proc file (process and thread) that holds a planted value, and the pids it saw. */
const PROBE = [
  "import os, json",
  `secrets = ${JSON.stringify(Object.values(SECRETS))}`,
  "hits, seen = [], []",
  "for pid in os.listdir('/proc'):",
  "    if not pid.isdigit(): continue",
  "    seen.append(int(pid))",
  "    tasks = os.listdir(f'/proc/{pid}/task') if os.path.isdir(f'/proc/{pid}/task') else []",
  "    for path in [f'/proc/{pid}'] + [f'/proc/{pid}/task/{t}' for t in tasks]:",
  "        for name in ('environ', 'cmdline'):",
  "            try: data = open(f'{path}/{name}', 'rb').read().decode('utf-8', 'replace')",
  "            except OSError: continue",
  "            hits += [f'{path}/{name}: {s}' for s in secrets if s in data]",
  "own = open('/proc/self/environ', 'rb').read().decode()",
  "hits += [f'/proc/self/environ: {s}' for s in secrets if s in own]",
  "print(json.dumps({'hits': hits, 'pids': sorted(seen)}))",
].join("\n");

interface Probed {
  readonly hits: string[];
  readonly pids: number[];
}

function parseProbe(stdout: string): Probed {
  const line = stdout.split("\n").find((l) => l.startsWith("{"));
  if (line === undefined) throw new Error(`the probe printed no result: ${stdout}`);
  return JSON.parse(line) as Probed;
}

/** The probe's verdict: no hit, and it saw at least bwrap's pid 1 and the kernel (so it read something). */
function expectClean(probed: Probed): void {
  expect(probed.hits).toEqual([]);
  expect(probed.pids).toContain(1);
  expect(probed.pids.length).toBeGreaterThanOrEqual(2);
}

let dirs: Dirs;
let daemon: DaemonProcess;
let pooled: DaemonProcess;

beforeAll(async () => {
  if (NO_SANDBOX) return;
  dirs = await makeDirs();
  await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ sandbox: "required" }), { mode: 0o600 });
  daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"], SECRETS);
});

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  if (pooled) await killDaemon(pooled, "SIGTERM");
  await dirs?.cleanup();
});

async function open(on: DaemonProcess): Promise<string> {
  const created = await call(on, "POST", "/sessions", { workspace: dirs.workspace });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id as string;
}

async function probe(on: DaemonProcess, id: string): Promise<Probed> {
  const answer = await call(on, "POST", `/sessions/${id}/execute`, { code: PROBE });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const outputs = answer.body.outputs as { msg_type: string; content: { name?: string; text?: string } }[];
  return parseProbe(outputs.filter((o) => o.msg_type === "stream" && o.content.name === "stdout").map((o) => o.content.text).join(""));
}

async function kernelPid(on: DaemonProcess, id: string): Promise<{ pid: number | null; status: string }> {
  return (await call(on, "GET", `/sessions/${id}`)).body.kernel;
}

describe.skipIf(NO_SANDBOX)("K-10 B the host's environment stays outside the sandbox (real sandboxed kernels)", () => {
  it("albedo exec: no planted variable in any readable /proc environ or cmdline", async () => {
    const run = await runAlbedo(["exec", "-c", PROBE], {
      cwd: dirs.workspace,
      env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.state, ...SECRETS },
    });
    expect(run.code, run.stderr).toBe(0);
    expectClean(parseProbe(run.stdout));
  });

  it("a daemon session, and the same session after its kernel was killed and restarted", async () => {
    const id = await open(daemon);
    try {
      expectClean(await probe(daemon, id));
      const before = await kernelPid(daemon, id);
      await call(daemon, "POST", `/sessions/${id}/execute`, { code: "import os, signal; os.kill(os.getpid(), signal.SIGKILL)" });
      await poll(async () => {
        const now = await kernelPid(daemon, id);
        return now.pid !== null && now.pid !== before.pid && (now.status === "idle" || now.status === "ready");
      }, { what: "the kernel to be restarted" });
      expectClean(await probe(daemon, id));
    } finally {
      await call(daemon, "DELETE", `/sessions/${id}`);
    }
  });

  it("a warm spare taken by a session", async () => {
    await killDaemon(daemon, "SIGTERM");
    pooled = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "1"], SECRETS);
    // The first session on a workspace makes the pool keep a spare for it; the second takes it.
    const first = await open(pooled);
    const ready = async () => ((await call(pooled, "GET", "/health")).body.spares as { state: string }[]).some((s) => s.state === "ready");
    await poll(ready, { what: "a ready spare" });
    const second = await open(pooled);
    try {
      expect((await call(pooled, "GET", `/sessions/${second}`)).body.kernel.warm, "the session took the spare").toBe(true);
      expectClean(await probe(pooled, second));
    } finally {
      for (const id of [first, second]) await call(pooled, "DELETE", `/sessions/${id}`);
    }
  });
});
