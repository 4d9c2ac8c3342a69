import { existsSync, readFileSync, realpathSync } from "node:fs";
import type { AddressInfo, Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareSandbox, pythonReadPaths, type BwrapSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { closeServer, listen, makeTree, newServer, profileOf, PYTHON, runPython, type Tree } from "./fixture.js";
import { NO_SANDBOX } from "../support/sandbox.js";

/** Tries each operation inside the sandbox and prints {name: "ok[:value]" | "error:Type:message"}. */
const PROBE = String.raw`
import json, os, socket, subprocess
P = json.loads(PARAMS)
res = {}
def check(name, fn):
    try:
        v = fn()
        res[name] = "ok" if v is None else "ok:" + str(v)
    except BaseException as e:
        res[name] = "error:" + type(e).__name__ + ":" + str(e)
def read(p):
    with open(p) as f: return f.read().strip()
def write(p):
    with open(p, "w") as f: f.write("written inside\n")
def unix(p):
    s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(p); s.close()
def tcp(port):
    socket.create_connection(("127.0.0.1", port), timeout=3).close()
def umount_then_read():
    subprocess.run(["umount", P["stateDir"]], capture_output=True)
    return read(os.path.join(P["stateDir"], "daemon.token"))
S, R, W, H = P["stateDir"], P["otherRunDir"], P["workspace"], P["home"]
check("read_token", lambda: read(os.path.join(S, "daemon.token")))
check("read_settings", lambda: read(os.path.join(S, "settings.json")))
check("list_state_dir", lambda: sorted(os.listdir(S)))
check("list_run_dirs", lambda: sorted(os.listdir(os.path.dirname(R))))
check("list_other_run_dir", lambda: os.listdir(R))
check("connect_other_socket", lambda: unix(os.path.join(R, "rpc.sock")))
check("tcp_loopback", lambda: tcp(P["tcpPort"]))
check("write_etc", lambda: write("/etc/albedo-probe"))
check("write_usr", lambda: write("/usr/albedo-probe"))
check("write_home", lambda: write(os.path.join(H, "albedo-probe")))
check("write_tmp", lambda: write(P["hostTmpFile"]))
check("read_ssh", lambda: read(os.path.join(H, ".ssh", "id_ed25519")))
check("umount_state_dir", umount_then_read)
check("write_cgroupfs", lambda: os.mkdir("/sys/fs/cgroup/pids/albedo-probe"))
check("read_workspace", lambda: read(os.path.join(W, "data.txt")))
check("write_workspace", lambda: write(os.path.join(W, "out.txt")))
check("write_run_dir", lambda: write(os.path.join(P["runDir"], "probe.txt")))
check("read_skill_via_link", lambda: read(os.path.join(P["linkedRoot"], "demo", "SKILL.md"))[:3])
check("read_linked_skill", lambda: read(os.path.join(W, ".agents", "skills", "linked", "SKILL.md"))[:3])
check("read_unexposed", lambda: read(P["unexposedFile"]))
check("write_user_skill_root", lambda: write(os.path.join(P["linkedRoot"], "demo", "new.txt")))
check("write_workspace_skill_root", lambda: write(os.path.join(W, ".agents", "skills", "new.txt")))
check("import_ipykernel", lambda: __import__("ipykernel").__version__)
check("cwd", lambda: os.getcwd())
check("env", lambda: json.dumps({k: os.environ.get(k) for k in ["HOME", "ALBEDO_RPC_TOKEN", "OPENAI_API_KEY", "JPY_PARENT_PID", "FROM_PROFILE"]}))
print(json.dumps(res))
`;

describe.skipIf(NO_SANDBOX)("K-10 sandbox isolation (real bwrap, real Python)", () => {
  let tree: Tree;
  let sandbox: BwrapSandbox;
  let otherSocket: Server;
  let tcpServer: Server;
  let tcpPort: number;
  let results: Record<string, string>;
  const hostTmpFile = join("/tmp", `albedo-probe-${process.pid}-${Date.now()}`);

  beforeAll(async () => {
    tree = makeTree();
    otherSocket = await listen(newServer(), join(tree.otherRunDir, "rpc.sock"));
    tcpServer = await listen(newServer(), { port: 0, host: "127.0.0.1" });
    tcpPort = (tcpServer.address() as AddressInfo).port;
    const prepared: Sandbox = prepareSandbox({
      mode: "required",
      profile: profileOf(tree, await pythonReadPaths(PYTHON), { env: { FROM_PROFILE: "yes" } }),
    });
    if (prepared.kind !== "bwrap") throw new Error("expected a bwrap sandbox");
    sandbox = prepared;
    const params = { ...tree, tcpPort, hostTmpFile };
    const run = await runPython(sandbox.wrap, PROBE.replace("json.loads(PARAMS)", `json.loads(${JSON.stringify(JSON.stringify(params))})`), {
      ...process.env,
      ALBEDO_RPC_TOKEN: "rpc-token",
      OPENAI_API_KEY: "sk-must-not-leak",
      JPY_PARENT_PID: String(process.pid),
    } as Record<string, string>);
    if (run.code !== 0) throw new Error(`probe failed (${String(run.code ?? run.signal)}): ${run.stderr}`);
    results = JSON.parse(run.stdout) as Record<string, string>;
  });

  afterAll(async () => {
    await sandbox?.dispose();
    if (otherSocket) await closeServer(otherSocket);
    if (tcpServer) await closeServer(tcpServer);
    tree?.remove();
  });

  describe("K-10 no view of the state dir or other sessions", () => {
    it("cannot read daemon.token or settings.json", () => {
      expect(results.read_token).toMatch(/^error:FileNotFoundError/);
      expect(results.read_settings).toMatch(/^error:FileNotFoundError/);
    });
    it("sees only its own run dir inside the state dir", () => {
      expect(results.list_state_dir).toBe("ok:['run']");
      expect(results.list_run_dirs).toBe("ok:['sess-a']");
      expect(results.list_other_run_dir).toMatch(/^error:FileNotFoundError/);
    });
    it("cannot connect to another session's IPC socket", () => {
      expect(results.connect_other_socket).toMatch(/^error:FileNotFoundError/);
    });
    it("cannot unmount the tmpfs that hides the state dir, even as the host's root", () => {
      expect(results.umount_state_dir).toMatch(/^error:FileNotFoundError/);
    });
  });

  describe("K-10 system read-only, home and host /tmp private", () => {
    it("cannot write /etc, /usr or the cgroup filesystem", () => {
      expect(results.write_etc).toMatch(/^error:OSError.*Read-only file system/);
      expect(results.write_usr).toMatch(/^error:OSError.*Read-only file system/);
      expect(results.write_cgroupfs).toMatch(/^error:/);
    });
    it("writes to the home and /tmp land in private scratch dirs on disk in the run dir, not in the host's", () => {
      expect(results.write_home).toBe("ok");
      expect(results.write_tmp).toBe("ok");
      expect(existsSync(join(tree.home, "albedo-probe"))).toBe(false);
      expect(existsSync(hostTmpFile)).toBe(false);
      expect(readFileSync(join(tree.runDir, "home", "albedo-probe"), "utf8")).toBe("written inside\n");
      expect(readFileSync(join(tree.runDir, "tmp", hostTmpFile.slice("/tmp/".length)), "utf8")).toBe("written inside\n");
    });
    it("cannot read ~/.ssh", () => {
      expect(results.read_ssh).toMatch(/^error:FileNotFoundError/);
    });
    it("cannot read a file outside every exposed path", () => {
      expect(results.read_unexposed).toMatch(/^error:FileNotFoundError/);
    });
  });

  describe("K-10 what the kernel may use", () => {
    it("reads and writes the workspace, and the host sees the write", () => {
      expect(results.read_workspace).toBe("ok:workspace data");
      expect(results.write_workspace).toBe("ok");
      expect(readFileSync(join(tree.workspace, "out.txt"), "utf8")).toBe("written inside\n");
      expect(results.cwd).toBe(`ok:${realpathSync(tree.workspace)}`);
    });
    it("writes its own run dir", () => {
      expect(results.write_run_dir).toBe("ok");
      expect(readFileSync(join(tree.runDir, "probe.txt"), "utf8")).toBe("written inside\n");
    });
    it("reads skill roots (through a linked user root) but cannot write them", () => {
      expect(results.read_skill_via_link).toBe("ok:---");
      expect(results.write_user_skill_root).toMatch(/^error:OSError.*Read-only file system/);
      expect(results.write_workspace_skill_root).toMatch(/^error:OSError.*Read-only file system/);
    });
    it("imports the venv's ipykernel", () => {
      expect(results.import_ipykernel).toMatch(/^ok:\d+\./);
    });
    it("gets an explicit environment: allow-listed RPC vars and profile env in; secrets and JPY_PARENT_PID out", () => {
      const env = JSON.parse(results.env!.slice(3)) as Record<string, string | null>;
      expect(env).toEqual({ HOME: tree.home, ALBEDO_RPC_TOKEN: "rpc-token", OPENAI_API_KEY: null, JPY_PARENT_PID: null, FROM_PROFILE: "yes" });
    });
  });

  describe("K-10 a link in the workspace never exposes anything outside it", () => {
    it("does not bind a workspace skill's link target that lies outside the workspace, and says so", () => {
      expect(results.read_linked_skill).toMatch(/^error:FileNotFoundError/);
      const note = sandbox.notes.find((n) => n.path.endsWith("/.agents/skills/linked"));
      expect(note?.message).toMatch(/a link the kernel can rewrite leads outside the workspace/);
    });
  });

  describe("K-10 no network unless allowed", () => {
    it("cannot reach a loopback TCP server of the host", () => {
      expect(results.tcp_loopback).toMatch(/^error:ConnectionRefusedError/);
    });
    it("reaches it when the profile allows the network", async () => {
      const open = prepareSandbox({ mode: "required", profile: profileOf(tree, await pythonReadPaths(PYTHON), { network: true }), pidsCgroup: false });
      const code = `import socket; socket.create_connection(("127.0.0.1", ${tcpPort}), timeout=3).close(); print("connected")`;
      const run = await runPython(open.wrap, code);
      await open.dispose();
      expect(run.stdout.trim()).toBe("connected");
    });
  });
});
