import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareSandbox, pythonReadPaths, type Sandbox } from "../../src/sandbox/index.js";
import { killTree, makeTree, profileOf, PYTHON, removeTree, requireBwrap, type Tree } from "./fixture.js";

/** Upper bound for the whole host-side client conversation. */
const CLIENT_TIMEOUT_MS = 60_000;

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

describe("K-10 a real ipykernel inside the sandbox", () => {
  let tree: Tree;
  let sandbox: Sandbox;
  let kernel: { child: ChildProcess; exited: Promise<unknown> } | undefined;

  beforeAll(async () => {
    requireBwrap();
    tree = makeTree();
    sandbox = prepareSandbox({ mode: "required", profile: profileOf(tree, await pythonReadPaths(PYTHON)) });
  });
  afterAll(async () => {
    if (kernel) await killTree(kernel);
    await sandbox?.dispose();
    if (tree) removeTree(tree);
  });

  it("boots over IPC sockets in its run dir, runs code in the workspace and is interrupted by message", async () => {
    const connectionFile = join(tree.runDir, "kernel.json");
    const ports = { shell_port: 1, iopub_port: 2, stdin_port: 3, control_port: 4, hb_port: 5 };
    const connection = { ...ports, transport: "ipc", ip: join(tree.runDir, "k"), key: randomBytes(16).toString("hex"), signature_scheme: "hmac-sha256" };
    writeFileSync(connectionFile, JSON.stringify(connection), { mode: 0o600 });
    // The kernel client sets JPY_PARENT_PID; inside a pid namespace it would make ipykernel quit at once.
    const spawnEnv = { ...process.env, JPY_PARENT_PID: String(process.pid) };
    const argv = sandbox.wrap([PYTHON, "-m", "ipykernel_launcher", "-f", connectionFile], spawnEnv);
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"] });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])));
    kernel = { child, exited };
    const client = spawnSync(PYTHON, ["-c", HOST_CLIENT, connectionFile], { encoding: "utf8", timeout: CLIENT_TIMEOUT_MS });
    expect(client.status, client.stderr).toBe(0);
    const out = JSON.parse(client.stdout) as { cwd: string; interrupted: string };
    expect(out).toEqual({ cwd: `'${tree.workspace}'`, interrupted: "KeyboardInterrupt" });
    const [code] = await exited;
    expect(code).toBe(0);
  });
});
