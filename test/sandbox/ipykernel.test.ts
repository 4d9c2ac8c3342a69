import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Writable } from "node:stream";
import { CONNECTION_FILE_PLACEHOLDER } from "../../src/kernel/index.js";
import { prepareSandbox, pythonReadPaths, type BwrapSandbox } from "../../src/sandbox/index.js";
import { killTree, makeTree, profileOf, PYTHON, type Tree } from "./fixture.js";
import { NO_SANDBOX } from "../support/sandbox.js";

/** Upper bound for the whole host-side client conversation. */
const CLIENT_TIMEOUT_MS = 60_000;
/** How long the kernel may take to exit once the client asked it to shut down. */
const KERNEL_EXIT_MS = 15_000;
/** The test's own bound: past the client's and the kernel's, so a stuck step fails with its output instead of a bare timeout. */
const TEST_TIMEOUT_MS = CLIENT_TIMEOUT_MS + KERNEL_EXIT_MS + 10_000;

/** A jupyter_client session from outside the sandbox: boot check, one execute, a message-mode interrupt, shutdown. */
const HOST_CLIENT = `
import json, sys, time
from jupyter_client import BlockingKernelClient
kc = BlockingKernelClient(connection_file=sys.argv[1]); kc.load_connection_file(); kc.start_channels()
kc.wait_for_ready(timeout=45)
out = {}
r = kc.execute("import os", user_expressions={"cwd": "os.getcwd()"}, reply=True, timeout=30)
out["cwd"] = r["content"]["user_expressions"]["cwd"]["data"]["text/plain"]
sleeping = kc.execute("import time; print('sleeping', flush=True); time.sleep(30)")
# Interrupt only once the cell runs: an interrupt that lands before would be lost or cost the reply.
deadline = time.monotonic() + 20
while True:
    m = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
    if m["parent_header"].get("msg_id") == sleeping and m["msg_type"] == "stream" and "sleeping" in m["content"]["text"]:
        break
kc.control_channel.send(kc.session.msg("interrupt_request", {}))
reply = kc.get_shell_msg(timeout=20)
out["interrupted"] = reply["content"].get("ename")
kc.shutdown()
print(json.dumps(out))
`;

/** Runs HOST_CLIENT without blocking this process, so the kernel's stderr keeps draining meanwhile. */
async function runClient(connectionFile: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(PYTHON, ["-c", HOST_CLIENT, connectionFile], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  let killed = false;
  const timer = setTimeout(() => ((killed = true), child.kill("SIGKILL")), CLIENT_TIMEOUT_MS);
  const status = await new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  clearTimeout(timer);
  return { status, stdout, stderr: killed ? `${stderr}\n(killed after CLIENT_TIMEOUT_MS = ${CLIENT_TIMEOUT_MS} ms)` : stderr };
}

describe.skipIf(NO_SANDBOX)("K-10 a real ipykernel inside the sandbox", () => {
  let tree: Tree;
  let sandbox: BwrapSandbox;
  let kernel: { child: ChildProcess; exited: Promise<unknown> } | undefined;

  beforeAll(async () => {
    tree = makeTree();
    const prepared = prepareSandbox({ mode: "required", profile: profileOf(tree, await pythonReadPaths(PYTHON)) });
    if (prepared.kind !== "bwrap") throw new Error("expected a bwrap sandbox");
    sandbox = prepared;
  });
  afterAll(async () => {
    if (kernel) await killTree(kernel);
    await sandbox?.dispose();
    tree?.remove();
  });

  it("boots over IPC sockets in its run dir, runs code in the workspace and is interrupted by message", async () => {
    // The test's own client reads the connection from the host; the kernel gets its copy from the sandbox.
    const connectionFile = join(tree.base, "client-connection.json");
    const ports = { shell_port: 1, iopub_port: 2, stdin_port: 3, control_port: 4, hb_port: 5 };
    const connection = { ...ports, transport: "ipc", ip: join(tree.runDir, "k"), key: randomBytes(16).toString("hex"), signature_scheme: "hmac-sha256" };
    writeFileSync(connectionFile, JSON.stringify(connection), { mode: 0o600 });
    // The kernel client sets JPY_PARENT_PID; inside a pid namespace it would make ipykernel quit at once.
    const spawnEnv = { ...process.env, JPY_PARENT_PID: String(process.pid) };
    const launch = sandbox.wrap({ argv: [PYTHON, "-m", "ipykernel_launcher", "-f", CONNECTION_FILE_PLACEHOLDER], env: spawnEnv, connection: JSON.stringify(connection) });
    const child = spawn(launch.argv[0]!, launch.argv.slice(1), { stdio: ["ignore", "ignore", "pipe", ...launch.fds, "pipe"] });
    (child.stdio[3 + launch.fds.length] as Writable).end(launch.feed);
    let kernelErr = "";
    child.stderr!.on("data", (d: Buffer) => (kernelErr += d.toString()));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])));
    kernel = { child, exited };
    const client = await runClient(connectionFile);
    expect(client.status, `${client.stderr}\nkernel stderr: ${kernelErr}`).toBe(0);
    const out = JSON.parse(client.stdout) as { cwd: string; interrupted: string };
    expect(out).toEqual({ cwd: `'${tree.workspace}'`, interrupted: "KeyboardInterrupt" });
    let timer: NodeJS.Timeout | undefined;
    const [code] = await Promise.race([
      exited,
      new Promise<[string]>((resolve) => (timer = setTimeout(() => resolve([`still running ${KERNEL_EXIT_MS} ms after shutdown`]), KERNEL_EXIT_MS))),
    ]).finally(() => clearTimeout(timer));
    expect(code, `kernel stderr: ${kernelErr}`).toBe(0);
  }, TEST_TIMEOUT_MS);
});
