/**
 * A sandboxed kernel that opens thousands of connections to its RPC socket, replayed inside a real
 * daemon started under a low open-file limit. Before the gate, libzmq accepted every one of them
 * until the daemon ran out of descriptors and aborted in ipc_listener.cpp, taking every session down.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RPC_PEERS_PER_SESSION, RPC_FDS_PER_PEER } from "../../src/rpc/index.js";
import { descriptorsAtBounds } from "../../src/daemon/descriptors.js";
import { MAX_SESSIONS } from "../../src/daemon/limits.js";
import { call, makeDirs, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { alive } from "../support/process.js";
import { poll } from "../support/poll.js";
import { writeSkill } from "../support/skills.js";

/**
 * The daemon's open-file limit, soft and hard (Node raises the soft one to the hard one at start):
 * the kernels' own default, so they start as they would anywhere, and far below what the flood opens.
 */
const DAEMON_NOFILE = 1024;
/** A daemon limit below the kernels' default open-file limit (DEFAULT_OPEN_FILES, 1024). */
const LOW_NOFILE = 512;
/** Processes the attacking cell forks, and connections each opens: far past DAEMON_NOFILE together. */
const CHILDREN = 8;
const CONNECTIONS_PER_CHILD = 300;
/** Descriptors the daemon may open beyond the gate's own while the test talks to it (HTTP, a cell's files). */
const SLACK_FDS = 24;
const KERNEL_TEST_MS = 180_000;

let dirs: Dirs;
let logFile: string;
const fixture = daemonFixture();

beforeAll(async () => {
  if (NO_SANDBOX) return;
  dirs = await makeDirs();
  logFile = join(dirs.state, "daemon.log");
  writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
});

afterAll(async () => {
  await dirs?.cleanup();
});

/** Starts the daemon with sandboxed kernels under an open-file limit of `nofile`. */
async function startWithin(nofile: number): Promise<DaemonProcess> {
  const args = ["--listen", "127.0.0.1:0", "--pool", "0", "--sandbox", "required", "--log-file", logFile];
  return fixture.start(args, {}, { dirs, wrap: ["prlimit", `--nofile=${nofile}:${nofile}`, "--"] });
}

async function open(on: DaemonProcess): Promise<string> {
  const created = await call(on, "POST", "/sessions", { workspace: dirs.workspace });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id as string;
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
 * Forks CHILDREN processes that each connect CONNECTIONS_PER_CHILD raw Unix sockets to the RPC
 * endpoint (stopping at the first refusal) and hold them until `_release` is closed; prints each
 * child's [connected, first error].
 */
const FLOOD = `
import os, socket, json
path = os.environ['ALBEDO_RPC_ENDPOINT'][len('ipc://'):]
release_r, _release = os.pipe()
report_r, report_w = os.pipe()
for _ in range(${CHILDREN}):
    if os.fork() == 0:
        os.close(_release); os.close(report_r)
        held, why = [], None
        for _ in range(${CONNECTIONS_PER_CHILD}):
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(path)
            except OSError as e:
                why = type(e).__name__
                break
            held.append(s)
        os.write(report_w, (json.dumps([len(held), why]) + '\\n').encode())
        os.read(release_r, 1)
        os._exit(0)
os.close(release_r); os.close(report_w)
with os.fdopen(report_r) as reports:
    print(json.dumps([json.loads(reports.readline()) for _ in range(${CHILDREN})]))
`;

const LIST = "print(len((await skills.list())['skills']))";
/** A plain script the kernel starts: its blocking call needs a connection of its own through the public socket. */
const SCRIPT_CALL = "import subprocess, sys\nprint(subprocess.run([sys.executable, '-c', 'from albedo import skills; print(len(skills.list()[\"skills\"]))'], capture_output=True, text=True, timeout=60).stdout.strip())";

function fdsOf(on: DaemonProcess): number {
  return readdirSync(`/proc/${on.process.pid!}/fd`).length;
}

describe.skipIf(NO_SANDBOX)("B K-4 K-10 a sandboxed kernel flooding its RPC socket with connections cannot exhaust the daemon's descriptors", () => {
  it(`${CHILDREN} × ${CONNECTIONS_PER_CHILD} connections under a ${DAEMON_NOFILE}-file limit: the daemon holds at most MAX_RPC_PEERS_PER_SESSION of them, both sessions keep calling skills.list`, async () => {
    const on = await startWithin(DAEMON_NOFILE);
    const attacker = await open(on);
    const other = await open(on);
    const listed = await py(on, other, LIST);
    expect(Number(listed)).toBeGreaterThan(0);
    const before = fdsOf(on);

    const reports = JSON.parse(await py(on, attacker, FLOOD)) as [number, string | null][];
    expect(reports).toHaveLength(CHILDREN);
    // The gate stopped listening once full, so connects failed in the kernel itself.
    expect(reports.some(([, why]) => why === "FileNotFoundError" || why === "ConnectionRefusedError"), JSON.stringify(reports)).toBe(true);

    expect(alive(on.process.pid!)).toBe(true);
    expect((await call(on, "GET", "/health")).body).toMatchObject({ ok: true, sessions: 2 });
    expect(fdsOf(on)).toBeLessThanOrEqual(before + MAX_RPC_PEERS_PER_SESSION * RPC_FDS_PER_PEER + SLACK_FDS);
    expect(await py(on, other, LIST)).toBe(listed);
    expect(await py(on, other, SCRIPT_CALL)).toBe(listed);
    // The attacker's own cells still reach the runtime: its main loop has the socket the runtime dialled.
    expect(await py(on, attacker, LIST)).toBe(listed);
    expect(readFileSync(logFile, "utf8")).toContain(`MAX_RPC_PEERS_PER_SESSION (${MAX_RPC_PEERS_PER_SESSION})`);

    // Released, the children exit and the attacker's scripts get through again.
    await py(on, attacker, "os.close(_release)");
    await poll(async () => (await py(on, attacker, SCRIPT_CALL)) === listed, { what: "a script of the attacking kernel to reach the runtime again" });
  }, KERNEL_TEST_MS);
});

describe.skipIf(NO_SANDBOX)("K-10 a daemon whose own open-file limit is below the kernels' still starts sandboxed kernels", () => {
  it(`under a ${LOW_NOFILE}-file limit the kernel gets ${LOW_NOFILE} open files, and the log says why and that the daemon itself is short`, async () => {
    const on = await startWithin(LOW_NOFILE);
    const id = await open(on);
    expect(await py(on, id, "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE))")).toBe(`(${LOW_NOFILE}, ${LOW_NOFILE})\n`);
    const log = readFileSync(logFile, "utf8");
    expect(log).toContain(`limits.openFiles 1024 is above this process's own hard limit (${LOW_NOFILE})`);
    expect(log).toContain(`open-file limit ${LOW_NOFILE} is below the ${descriptorsAtBounds(MAX_SESSIONS)} descriptors`);
  }, KERNEL_TEST_MS);
});
